import type { APIGatewayProxyEvent } from "aws-lambda";
import type { IncomingMessage, ServerResponse } from "node:http";
import { addHeaderIfAbsent, headerMaps, queryMaps, readBody, sendGatewayError, sourceIpOf, splitTarget } from "./http";
import { formatRequestTime, newGatewayId, newRestRequestId, newTraceId } from "./ids";
import { invokeWithTimeout } from "./invoke";
import { selectRoute, type RouteMatch } from "./rest-routes";
import { StreamedResponseWriter } from "./rest-stream";
import { REST_PAYLOAD_BYTES, type GatewaySettings, type RestHandler } from "./types";

const REST_FUNCTION_NAME = "rest-api";
const LOCAL_ACCOUNT_ID = "000000000000";

/** Per-request values API Gateway generates, kept together so the response can echo them. */
interface RequestIds {
  requestId: string;
  extendedRequestId: string;
  traceId: string;
  nowMs: number;
}

/**
 * The REST API as CDK's `LambdaRestApi` (proxy: true) builds it: `ANY /` and
 * `ANY /{proxy+}`, both a Lambda proxy integration (payload format 1.0).
 */
export async function handleRestRequest(
  req: IncomingMessage,
  res: ServerResponse,
  settings: GatewaySettings,
  handler: RestHandler,
): Promise<void> {
  const nowMs = Date.now();
  const ids: RequestIds = { requestId: newRestRequestId(), extendedRequestId: newGatewayId(), traceId: newTraceId(nowMs), nowMs };
  const read = await readBody(req, REST_PAYLOAD_BYTES);
  if (read.kind === "aborted") return;
  if (read.kind === "tooLarge") {
    // Node discards the unread rest of the body after the answer, so the client sees the 413.
    sendGatewayError(res, 413, "Request Too Long", undefined, ids.requestId);
    return;
  }
  const match = selectRoute(settings.restRoutes, req.method ?? "GET", splitTarget(req.url ?? "/").rawPath);
  if (!match) {
    // What API Gateway answers for a path or method the API does not define.
    sendGatewayError(res, 403, "Missing Authentication Token", "MissingAuthenticationTokenException", ids.requestId);
    return;
  }
  const event = await authorizeRest(buildRestEvent(req, read.body, settings, ids, match), match, settings);
  if ("statusCode" in event) {
    sendAuthorizerRefusal(res, event, settings, ids.requestId);
    return;
  }
  if (match.route.streamHandler) return streamRestResponse(res, event, settings, ids, match);
  const timeoutMs = Math.min(match.route.timeoutMs ?? settings.limits.integrationTimeoutMs, settings.limits.integrationTimeoutMs);
  const context = settings.createContext(REST_FUNCTION_NAME, timeoutMs);
  const routeHandler = match?.route.handler ?? handler;
  const outcome = await invokeWithTimeout((progress) => routeHandler(event, context, progress), timeoutMs);
  if (outcome.kind === "timedOut") {
    sendGatewayError(res, 504, "Endpoint request timed out", undefined, ids.requestId);
    return;
  }
  const response = outcome.kind === "returned" ? parseProxyResult(outcome.value) : undefined;
  if (response === undefined) {
    // A throw and a malformed result look the same to the client in AWS.
    sendGatewayError(res, 502, "Internal server error", "InternalServerErrorException", ids.requestId);
    return;
  }
  writeProxyResponse(res, response, ids);
}

/**
 * A streamed integration (`responseTransferMode: STREAM`): no 29 s cut, the
 * integration's own timeout (up to 15 min) bounds the whole response.
 */
async function streamRestResponse(res: ServerResponse, event: APIGatewayProxyEvent, settings: GatewaySettings, ids: RequestIds, match: RouteMatch): Promise<void> {
  const timeoutMs = match.route.timeoutMs ?? settings.limits.integrationTimeoutMs;
  const context = settings.createContext(REST_FUNCTION_NAME, timeoutMs);
  const writer = new StreamedResponseWriter(res, { "x-amzn-RequestId": ids.requestId, "x-amz-apigw-id": ids.extendedRequestId, "X-Amzn-Trace-Id": ids.traceId });
  const outcome = await invokeWithTimeout((progress) => match.route.streamHandler!(event, context, (chunk) => writer.onChunk(chunk), progress), timeoutMs);
  if (outcome.kind === "returned") return writer.finish();
  if (writer.headersSent) {
    res.destroy();
    return;
  }
  if (outcome.kind === "timedOut") sendGatewayError(res, 504, "Endpoint request timed out", undefined, ids.requestId);
  else sendGatewayError(res, 502, "Internal server error", "InternalServerErrorException", ids.requestId);
}

const REFUSAL_TYPES: Record<number, { type: string; errorType?: string }> = {
  401: { type: "UNAUTHORIZED", errorType: "UnauthorizedException" },
  403: { type: "ACCESS_DENIED", errorType: "AccessDeniedException" },
  500: { type: "AUTHORIZER_FAILURE" },
};

/** API Gateway's answer, or the API's gateway response for that type when the template declares one. */
function sendAuthorizerRefusal(res: ServerResponse, refusal: { statusCode: number; message: string }, settings: GatewaySettings, requestId: string): void {
  const kind = REFUSAL_TYPES[refusal.statusCode] ?? { type: "DEFAULT_5XX" };
  const custom = settings.gatewayResponses[kind.type];
  if (!custom) return sendGatewayError(res, refusal.statusCode, refusal.message, kind.errorType, requestId);
  res.writeHead(custom.statusCode, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(custom.body),
    "x-amzn-RequestId": requestId,
    ...(kind.errorType ? { "x-amzn-ErrorType": kind.errorType } : {}),
  });
  res.end(custom.body);
}

/** Runs the method's authorizer (if any): the event with `requestContext.authorizer` filled, or the gateway's refusal. */
async function authorizeRest(event: APIGatewayProxyEvent, matched: RouteMatch, settings: GatewaySettings): Promise<APIGatewayProxyEvent | { statusCode: number; message: string }> {
  const authorizer = matched.route.authorizer;
  if (!authorizer) return event;
  const methodArn = `arn:aws:execute-api:${settings.region}:${settings.accountId}:${settings.apiId}/${settings.stage}/${event.httpMethod}${event.path}`;
  const { body: _body, isBase64Encoded: _b64, ...rest } = event;
  const decision = await authorizer.authorize({ headers: event.headers as Record<string, string>, query: event.queryStringParameters as Record<string, string> | null, methodArn, event: { type: "REQUEST", ...rest } });
  if (decision.kind === "deny") return decision;
  return { ...event, requestContext: { ...event.requestContext, authorizer: decision.authorizer } };
}

export function buildRestEvent(req: IncomingMessage, body: Buffer, settings: GatewaySettings, ids: RequestIds, match?: RouteMatch): APIGatewayProxyEvent {
  const { rawPath, search } = splitTarget(req.url ?? "/");
  const isRoot = rawPath === "/";
  const resource = match?.route.resourcePath ?? (isRoot ? "/" : "/{proxy+}");
  const maps = headerMaps(req.rawHeaders);
  const sourceIp = sourceIpOf(req);
  addHeaderIfAbsent(maps, "X-Forwarded-For", sourceIp);
  addHeaderIfAbsent(maps, "X-Forwarded-Port", String(req.socket.localPort ?? ""));
  addHeaderIfAbsent(maps, "X-Forwarded-Proto", "http");
  addHeaderIfAbsent(maps, "X-Amzn-Trace-Id", ids.traceId);
  const query = queryMaps(search);
  const domainName = req.headers.host ?? "localhost";
  const { text, isBase64Encoded } = encodeRequestBody(body);
  return {
    resource,
    path: rawPath,
    httpMethod: req.method ?? "GET",
    headers: maps.headers,
    multiValueHeaders: maps.multiValueHeaders,
    queryStringParameters: query?.queryStringParameters ?? null,
    multiValueQueryStringParameters: query?.multiValueQueryStringParameters ?? null,
    // `/{proxy+}` never matches the root, which is its own resource without parameters.
    pathParameters: match ? match.pathParameters : isRoot ? null : { proxy: decodePathSafely(rawPath.slice(1)) },
    stageVariables: null,
    requestContext: {
      accountId: LOCAL_ACCOUNT_ID,
      apiId: settings.apiId,
      authorizer: undefined,
      domainName,
      domainPrefix: domainName.split(".")[0],
      extendedRequestId: ids.extendedRequestId,
      httpMethod: req.method ?? "GET",
      identity: restIdentity(sourceIp, req.headers["user-agent"] ?? null),
      // AWS reports the path as the client addressed it, with the stage in front.
      path: `/${settings.stage}${rawPath}`,
      protocol: `HTTP/${req.httpVersion}`,
      requestId: ids.requestId,
      requestTime: formatRequestTime(ids.nowMs),
      requestTimeEpoch: ids.nowMs,
      // Stable per gateway, like the id of the one proxy resource in AWS.
      resourceId: settings.apiId.slice(0, 6),
      resourcePath: resource,
      stage: settings.stage,
    },
    body: text,
    isBase64Encoded,
  };
}

function restIdentity(sourceIp: string, userAgent: string | null): APIGatewayProxyEvent["requestContext"]["identity"] {
  return {
    accessKey: null,
    accountId: null,
    apiKey: null,
    apiKeyId: null,
    caller: null,
    clientCert: null,
    cognitoAuthenticationProvider: null,
    cognitoAuthenticationType: null,
    cognitoIdentityId: null,
    cognitoIdentityPoolId: null,
    principalOrgId: null,
    sourceIp,
    user: null,
    userAgent,
    userArn: null,
  };
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * A REST API passes a body through as text unless its content type is one of
 * the API's `binaryMediaTypes`, in which case it base64-encodes it. Locally
 * there is no such list: anything that is not valid UTF-8 counts as binary,
 * which is what a `binaryMediaTypes` covering the binary types we use gives.
 */
function encodeRequestBody(body: Buffer): { text: string | null; isBase64Encoded: boolean } {
  if (body.length === 0) return { text: null, isBase64Encoded: false };
  try {
    return { text: utf8.decode(body), isBase64Encoded: false };
  } catch {
    return { text: body.toString("base64"), isBase64Encoded: true };
  }
}

/** Path parameters arrive decoded; a malformed escape is passed through rather than failing the request. */
function decodePathSafely(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

interface ProxyResponse {
  statusCode: number;
  headers: Map<string, string[]>;
  body: Buffer;
}

type HeaderValue = string | number | boolean;

const isHeaderValue = (value: unknown): value is HeaderValue =>
  typeof value === "string" || typeof value === "number" || typeof value === "boolean";

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * Validates a Lambda proxy result the way API Gateway does; `undefined` means
 * "Malformed Lambda proxy response", which the client sees as a 502.
 */
export function parseProxyResult(result: unknown): ProxyResponse | undefined {
  if (!isRecord(result)) return undefined;
  const { statusCode, headers, multiValueHeaders, body, isBase64Encoded } = result;
  if (typeof statusCode !== "number" || !Number.isInteger(statusCode) || statusCode < 100 || statusCode > 599) return undefined;
  if (body !== undefined && body !== null && typeof body !== "string") return undefined;
  if (isBase64Encoded !== undefined && typeof isBase64Encoded !== "boolean") return undefined;
  const merged = mergeResultHeaders(headers, multiValueHeaders);
  if (merged === undefined) return undefined;
  const text = body ?? "";
  return { statusCode, headers: merged, body: Buffer.from(text, isBase64Encoded === true ? "base64" : "utf8") };
}

/**
 * Both maps may be given; when a name is in both, AWS keeps only the
 * `multiValueHeaders` values. Names compare case-insensitively, as in HTTP.
 */
function mergeResultHeaders(headers: unknown, multiValueHeaders: unknown): Map<string, string[]> | undefined {
  const merged = new Map<string, string[]>();
  if (headers !== undefined && headers !== null) {
    if (!isRecord(headers)) return undefined;
    for (const [name, value] of Object.entries(headers)) {
      if (!isHeaderValue(value)) return undefined;
      merged.set(name.toLowerCase(), [String(value)]);
    }
  }
  if (multiValueHeaders !== undefined && multiValueHeaders !== null) {
    if (!isRecord(multiValueHeaders)) return undefined;
    for (const [name, values] of Object.entries(multiValueHeaders)) {
      if (!Array.isArray(values) || !values.every(isHeaderValue)) return undefined;
      merged.set(name.toLowerCase(), values.map(String));
    }
  }
  return merged;
}

function writeProxyResponse(res: ServerResponse, response: ProxyResponse, ids: RequestIds): void {
  // REST APIs answer JSON unless the integration says otherwise.
  if (!response.headers.has("content-type")) response.headers.set("content-type", ["application/json"]);
  for (const [name, values] of response.headers) res.setHeader(name, values);
  res.setHeader("content-length", response.body.length);
  res.setHeader("x-amzn-RequestId", ids.requestId);
  res.setHeader("x-amz-apigw-id", ids.extendedRequestId);
  res.setHeader("X-Amzn-Trace-Id", ids.traceId);
  res.statusCode = response.statusCode;
  res.end(response.body);
}
