import type { IncomingMessage } from "node:http";
import { addHeaderIfAbsent, headerMaps, queryMaps, splitTarget } from "./http";
import { formatRequestTime, newGatewayId, newTraceId } from "./ids";
import type { GatewaySettings, WebSocketEvent, WebSocketRequestContext } from "./types";

/** What every event of one connection repeats. */
export interface ConnectionFacts {
  connectionId: string;
  connectedAt: number;
  domainName: string;
  sourceIp: string;
  userAgent: string | undefined;
  /** Set by the $connect authorizer. */
  authorizer?: Record<string, unknown>;
}

/**
 * Route selection for the expression `$request.body.method`: the body's
 * `method` when it names a known route, `$default` for anything else,
 * including bodies that are not JSON objects.
 */
export function selectRouteKey(body: string, routes: ReadonlySet<string>): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return "$default";
  }
  if (typeof parsed !== "object" || parsed === null) return "$default";
  const method = (parsed as { method?: unknown }).method;
  return typeof method === "string" && routes.has(method) ? method : "$default";
}

export function buildConnectEvent(req: IncomingMessage, settings: GatewaySettings, facts: ConnectionFacts): WebSocketEvent {
  const maps = headerMaps(req.rawHeaders);
  addHeaderIfAbsent(maps, "X-Amzn-Trace-Id", newTraceId(facts.connectedAt));
  addHeaderIfAbsent(maps, "X-Forwarded-For", facts.sourceIp);
  addHeaderIfAbsent(maps, "X-Forwarded-Port", String(req.socket.localPort ?? ""));
  addHeaderIfAbsent(maps, "X-Forwarded-Proto", "http");
  const query = queryMaps(splitTarget(req.url ?? "/").search);
  return {
    headers: maps.headers,
    multiValueHeaders: maps.multiValueHeaders,
    // Unlike REST (null), WebSocket events leave the query keys out when there is no query string.
    ...(query === undefined ? {} : query),
    requestContext: requestContext(settings, facts, { routeKey: "$connect", eventType: "CONNECT", messageId: undefined }),
    isBase64Encoded: false,
  };
}

export function buildMessageEvent(settings: GatewaySettings, facts: ConnectionFacts, routeKey: string, body: string): WebSocketEvent {
  return {
    requestContext: requestContext(settings, facts, { routeKey, eventType: "MESSAGE", messageId: newGatewayId() }),
    body,
    isBase64Encoded: false,
  };
}

export function buildDisconnectEvent(
  settings: GatewaySettings,
  facts: ConnectionFacts,
  statusCode: number,
  reason: string,
): WebSocketEvent {
  // AWS sends this fixed set on $disconnect rather than the client's headers.
  const headers = { Host: facts.domainName, "x-api-key": "", "X-Forwarded-For": "", "x-restapi": "" };
  const multiValueHeaders = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, [value]]));
  const context = requestContext(settings, facts, { routeKey: "$disconnect", eventType: "DISCONNECT", messageId: undefined });
  return {
    headers,
    multiValueHeaders,
    requestContext: { ...context, disconnectStatusCode: statusCode, disconnectReason: reason },
    isBase64Encoded: false,
  };
}

type Route = Pick<WebSocketRequestContext, "routeKey" | "eventType" | "messageId">;

function requestContext(settings: GatewaySettings, facts: ConnectionFacts, route: Route): WebSocketRequestContext {
  const nowMs = Date.now();
  // In WebSocket events AWS gives both ids the same value.
  const requestId = newGatewayId();
  return {
    ...route,
    connectionId: facts.connectionId,
    connectedAt: facts.connectedAt,
    domainName: facts.domainName,
    stage: settings.stage,
    apiId: settings.apiId,
    requestId,
    extendedRequestId: requestId,
    requestTime: formatRequestTime(nowMs),
    requestTimeEpoch: nowMs,
    messageDirection: "IN",
    identity: facts.userAgent === undefined ? { sourceIp: facts.sourceIp } : { sourceIp: facts.sourceIp, userAgent: facts.userAgent },
    ...(facts.authorizer ? { authorizer: facts.authorizer } : {}),
  };
}
