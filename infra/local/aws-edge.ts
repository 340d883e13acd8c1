/**
 * The single loopback door every locally run function's AWS SDK calls go
 * through (LocalStack's one-port idea), so IAM is enforced locally: the
 * caller is the access key id in the SigV4 credential scope, its identity
 * policy is evaluated against the call (iam/policy.ts on the checks of
 * iam/request-actions.ts), and the request is either forwarded unchanged to
 * that service's emulator or answered with AWS's AccessDenied in the
 * service's own wire shape, so the real SDK raises what it raises in AWS.
 *
 * Signatures are not verified (the secret is never known locally); the key
 * id alone names the caller. Condition context: `aws:SecureTransport` is
 * "true" because in AWS the SDK speaks HTTPS, and the loopback hop stands in
 * for that connection.
 */
import { listen } from "./listen";
import { accessDeniedError, coralError, forbiddenApiError, noEmulatorError, tooLargeError, unreachableError, unrecognizedClientError, type Refusal, type WireError } from "./aws-edge/wire-errors";
export type { WireError } from "./aws-edge/wire-errors";
import { Agent, createServer, request as httpRequest, ServerResponse, type IncomingMessage, type Server } from "node:http";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { evaluatePolicy, type IamStatement } from "./iam/policy";
import { type ActionCheck, credentialScopeOf, type EdgeRequest, requestActions, splitExecuteApiPrefix } from "./iam/request-actions";

export type EdgeService = "dynamodb" | "sqs" | "states" | "secretsmanager" | "lambda" | "execute-api" | "s3";

export interface LocalServiceRequest {
  method: string;
  /** Path with query string. */
  path: string;
  /** Lowercased names. */
  headers: Record<string, string>;
  body: Buffer;
}

export interface LocalServiceResponse {
  statusCode: number;
  headers?: Record<string, string>;
  body: Buffer | string;
}

/** An emulator served in-process instead of over HTTP. */
export type LocalServiceHandler = (request: LocalServiceRequest) => Promise<LocalServiceResponse>;

/** A base URL to proxy to over HTTP, or an in-process handler. */
export type EdgeUpstream = string | LocalServiceHandler;

export type EdgeIdentity =
  | { principalArn: string; statements: IamStatement[] }
  /** Local tooling (seeding tables, the CLI): every call allowed, none evaluated. */
  | { admin: true; principalArn: string };

export interface EdgeCall {
  service: string;
  /** The denied check's action, else the first check's. */
  action: string;
  checks: ActionCheck[];
  /** Undefined when the access key id is missing or unknown. */
  principalArn: string | undefined;
  statusCode: number;
  denied: boolean;
  requestBody: Buffer;
  responseBody: Buffer;
  durationMs: number;
}

export interface AwsEdgeOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** 0 (the default) picks a free port. */
  port?: number;
  region: string;
  accountId: string;
  /** Keyed by access key id. Copied: change it later with setIdentity/removeIdentity. */
  identities: ReadonlyMap<string, EdgeIdentity>;
  upstreams: Partial<Record<EdgeService, EdgeUpstream>>;
  queueArnForUrl?(url: string): string | undefined;
  secretArnForId?(id: string): string | undefined;
  onCall?(call: EdgeCall): void;
  /** Benchmarks: a replacement body for a request before it is forwarded (undefined keeps it). */
  rewriteRequestBody?(service: string, request: { headers: Record<string, string>; body: Buffer }): Buffer | undefined;
  /**
   * Benchmarks only: the milliseconds a region would add to a function's call
   * (network and service time), waited before it is answered, so calls in
   * flight together wait side by side and calls in turn add up: the run's
   * critical path at AWS-like latencies. Never set in normal runs.
   */
  callLatencyMs?(call: { service: string; action: string }): number;
  /** Tests only (infra/local/faults.ts): a fault for a function's call; never set in normal runs. */
  faultFor?(call: { service: string; action: string; principalArn: string; body: Buffer }): EdgeFaultAction | undefined;
  /**
   * API ids served under `/@execute-api/{apiId}`. When given, any other id is
   * answered 403 ForbiddenException, as API Gateway answers an unknown API.
   */
  executeApiIds?: readonly string[];
}

/**
 * Answer with this error, or run a step before or after the call is forwarded.
 * `callerDies`: the step after is the caller's death, so the call lands and
 * its answer reaches nobody (a function killed right after a write never acts
 * on the answer; sending it first would let the dying sandbox race its next call in).
 */
export type EdgeFaultAction = { refuse: WireError } | { before: () => Promise<void> } | { after: () => Promise<void>; callerDies?: boolean };

export interface AwsEdge {
  /** `http://127.0.0.1:<port>`: the `endpoint` of every SDK client. */
  endpoint: string;
  setIdentity(accessKeyId: string, identity: EdgeIdentity): void;
  removeIdentity(accessKeyId: string): void;
  close(): Promise<void>;
}

/** Well above Lambda's 6 MB payload and SQS's 1 MiB batch; an upload bigger than this is not a local use case. */
const MAX_REQUEST_BYTES = 64 * 1024 * 1024;
/** Per-connection headers (RFC 9110 §7.6.1) and the framing the edge redoes itself after buffering the body. */
const HOP_BY_HOP = new Set(["connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade", "expect", "content-length"]);

interface EdgeState {
  options: AwsEdgeOptions;
  identities: Map<string, EdgeIdentity>;
  agent: Agent;
}

interface Answer {
  statusCode: number;
  body: Buffer;
}

export async function startAwsEdge(options: AwsEdgeOptions): Promise<AwsEdge> {
  const state: EdgeState = { options, identities: new Map(options.identities), agent: new Agent({ keepAlive: true }) };
  const server = createServer((req, res) => {
    handle(req, res, state).catch(() => answerUnexpectedFailure(res));
  });
  const host = options.host ?? "127.0.0.1";
  const port = await listen(server, host, options.port ?? 0);
  return {
    endpoint: `http://${host.includes(":") ? `[${host}]` : host}:${port}`,
    setIdentity: (accessKeyId, identity) => void state.identities.set(accessKeyId, identity),
    removeIdentity: (accessKeyId) => void state.identities.delete(accessKeyId),
    close: () => closeEdge(server, state.agent),
  };
}

async function handle(req: IncomingMessage, res: ServerResponse, state: EdgeState): Promise<void> {
  const started = performance.now();
  const body = await readBody(req);
  const request: EdgeRequest = { method: req.method ?? "GET", path: req.url ?? "/", headers: flatHeaders(req), body: body ?? Buffer.alloc(0) };
  const { service, checks } = requestActions(request, state.options);
  // Benchmarks only (e.g. ask DynamoDB for ConsumedCapacity); never changes what is authorised.
  const rewritten = state.options.rewriteRequestBody?.(service, request);
  if (rewritten) request.body = rewritten;
  const call: IncomingCall = { incoming: req, request, rawHeaders: req.rawHeaders, tooLarge: body === undefined, service, checks, identity: identityOf(request, state) };
  const delayMs = call.identity && !("admin" in call.identity) ? (state.options.callLatencyMs?.({ service, action: checks[0]?.action ?? `${service}:Unknown` }) ?? 0) : 0;
  if (delayMs > 0) await sleep(delayMs);
  const outcome = await answerOrFault(call, state, res);
  state.options.onCall?.({
    service,
    action: outcome.refusedAction ?? checks[0]?.action ?? `${service}:Unknown`,
    checks,
    principalArn: call.identity?.principalArn,
    statusCode: outcome.statusCode,
    denied: outcome.denied,
    requestBody: request.body,
    responseBody: outcome.body,
    durationMs: performance.now() - started,
  });
}

interface IncomingCall {
  incoming: IncomingMessage;
  request: EdgeRequest;
  /** Keeps the caller's header case and repeated headers, so an emulator sees the request as sent. */
  rawHeaders: string[];
  tooLarge: boolean;
  service: string;
  checks: ActionCheck[];
  identity: EdgeIdentity | undefined;
}

interface Outcome extends Answer {
  denied: boolean;
  refusedAction?: string;
}

async function answerOrFault(call: IncomingCall, state: EdgeState, res: ServerResponse): Promise<Outcome> {
  const identity = call.identity;
  const action = call.checks[0]?.action ?? `${call.service}:Unknown`;
  const fault = identity && !("admin" in identity) ? state.options.faultFor?.({ service: call.service, action, principalArn: identity.principalArn, body: call.request.body }) : undefined;
  if (!fault) return answer(call, state, res);
  if ("refuse" in fault) return { ...send(res, fault.refuse), denied: false };
  if ("before" in fault) {
    // The caller is gone once this settles: no answer (and no SDK retry) can reach it.
    await fault.before();
    res.destroy();
    return { statusCode: 0, body: Buffer.alloc(0), denied: false };
  }
  if (!fault.callerDies) {
    const outcome = await answer(call, state, res);
    await fault.after();
    return outcome;
  }
  const outcome = await answer(call, state, new ServerResponse(call.incoming));
  await fault.after();
  res.destroy();
  return outcome;
}

/** Authenticate (key id known?), authorise (every check allowed?), then forward. */
async function answer(call: IncomingCall, state: EdgeState, res: ServerResponse): Promise<Outcome> {
  const { request, service, identity } = call;
  if (call.tooLarge) return { ...send(res, tooLargeError(service, request, MAX_REQUEST_BYTES)), denied: false };
  if (!identity) return { ...send(res, unrecognizedClientError(service, request)), denied: true };
  const refusal = "admin" in identity ? undefined : firstRefusal(call.checks, identity.statements, state, request);
  if (refusal) {
    const error = accessDeniedError(service, request, identity.principalArn, refusal);
    return { ...send(res, error), denied: true, refusedAction: refusal.check.action };
  }
  return { ...(await forward(call, state, res)), denied: false };
}

function identityOf(request: EdgeRequest, state: EdgeState): EdgeIdentity | undefined {
  const scope = credentialScopeOf(request);
  return scope ? state.identities.get(scope.accessKeyId) : undefined;
}

function firstRefusal(checks: ActionCheck[], statements: IamStatement[], state: EdgeState, request: EdgeRequest): Refusal | undefined {
  const context = conditionContext(request, state);
  for (const check of checks) {
    const evaluation = evaluatePolicy(statements, { ...check, context });
    if (evaluation.decision !== "allow") return { check, evaluation };
  }
  return undefined;
}

function conditionContext(request: EdgeRequest, state: EdgeState): Record<string, string> {
  const scope = credentialScopeOf(request);
  return {
    "aws:SecureTransport": "true",
    "aws:RequestedRegion": scope?.region ?? state.options.region,
    "aws:PrincipalAccount": state.options.accountId,
  };
}

// ---------------------------------------------------------------- forwarding

async function forward({ request, rawHeaders, service }: IncomingCall, state: EdgeState, res: ServerResponse): Promise<Answer> {
  const target = upstreamRequest(request, service, state);
  if ("error" in target) return send(res, target.error);
  if (typeof target.upstream === "string") return proxy(target.upstream, { ...request, path: target.path }, rawHeaders, state.agent, res);
  try {
    const response = await target.upstream({ ...request, path: target.path });
    return send(res, { statusCode: response.statusCode, headers: withoutFraming(response.headers ?? {}), body: Buffer.from(response.body) });
  } catch (error) {
    return send(res, coralError(service, 500, "InternalFailure", `The local ${service} emulator failed: ${String(error)}`));
  }
}

function upstreamRequest(request: EdgeRequest, service: string, state: EdgeState): { upstream: EdgeUpstream; path: string } | { error: WireError } {
  const upstream = state.options.upstreams[service as EdgeService];
  if (!upstream) return { error: noEmulatorError(service, request) };
  if (service !== "execute-api") return { upstream, path: request.path };
  const prefixed = splitExecuteApiPrefix(request.path);
  const known = state.options.executeApiIds;
  if (prefixed && known && !known.includes(prefixed.apiId)) return { error: forbiddenApiError() };
  return { upstream, path: prefixed?.path ?? request.path };
}

/** Streams the emulator's answer back as it arrives, keeping a copy for onCall. */
function proxy(baseUrl: string, request: EdgeRequest, rawHeaders: string[], agent: Agent, res: ServerResponse): Promise<Answer> {
  const base = new URL(baseUrl);
  const headers = [...forwardableHeaders(rawHeaders), "content-length", String(request.body.length)];
  return new Promise((resolve) => {
    const outgoing = httpRequest(
      { host: base.hostname.replace(/^\[|\]$/g, ""), port: base.port, method: request.method, path: `${base.pathname.replace(/\/$/, "")}${request.path}`, headers, agent },
      (incoming) => {
        const chunks: Buffer[] = [];
        incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
        incoming.on("end", () => resolve({ statusCode: incoming.statusCode ?? 502, body: Buffer.concat(chunks) }));
        incoming.on("error", () => resolve({ statusCode: 502, body: Buffer.concat(chunks) }));
        res.writeHead(incoming.statusCode ?? 502, forwardableHeaders(incoming.rawHeaders));
        incoming.pipe(res);
      },
    );
    // The caller went away: stop the emulator's work on its behalf too.
    res.on("close", () => {
      if (!res.writableFinished) outgoing.destroy();
    });
    outgoing.on("error", (error) => {
      if (res.headersSent) {
        res.destroy();
        resolve({ statusCode: 502, body: Buffer.alloc(0) });
      } else resolve(send(res, unreachableError(request, error)));
    });
    outgoing.end(request.body);
  });
}

/** send() sets content-length from the body it writes; a handler's own framing headers would contradict it. */
function withoutFraming(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_BY_HOP.has(name.toLowerCase())));
}

function forwardableHeaders(rawHeaders: string[]): string[] {
  const kept: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if (!HOP_BY_HOP.has(rawHeaders[i].toLowerCase())) kept.push(rawHeaders[i], rawHeaders[i + 1]);
  }
  return kept;
}

// ---------------------------------------------------------------- plumbing

function send(res: ServerResponse, response: WireError): Answer {
  res.writeHead(response.statusCode, { ...response.headers, "content-length": String(response.body.length) });
  res.end(response.body);
  return { statusCode: response.statusCode, body: response.body };
}

/** The whole body, or undefined past MAX_REQUEST_BYTES (the rest is drained so keep-alive survives). */
async function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size <= MAX_REQUEST_BYTES) chunks.push(chunk as Buffer);
  }
  return size <= MAX_REQUEST_BYTES ? Buffer.concat(chunks) : undefined;
}

function flatHeaders(req: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return headers;
}

/** A bug in the edge, not in an emulator: fail the one request rather than hang it. */
function answerUnexpectedFailure(res: ServerResponse): void {
  if (res.headersSent) res.destroy();
  else send(res, coralError("", 500, "InternalFailure", "The local AWS edge failed to handle the request."));
}


async function closeEdge(server: Server, agent: Agent): Promise<void> {
  const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeAllConnections();
  agent.destroy();
  await stopped;
}
