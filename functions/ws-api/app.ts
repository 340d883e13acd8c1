import type { Context, SQSBatchResponse, SQSEvent } from "aws-lambda";
import middy from "@middy/core";
import { getConnection, putConnection, removeConnection, type ConnectionRecord } from "../../shared/aws/connections";
import { callerFromContext, chosenProtocol, DEFAULT_RATE_LIMIT_PER_MINUTE, isScope, type Caller } from "../../shared/core/access";
import { DEPLOYMENT_TOKEN_CALLER } from "../../shared/runtime/auth";
import { requireScope } from "../../shared/tenancy/guard";
import { enforceRateLimit } from "../../shared/tenancy/rate-limit";
import { closeIfStillAnonymous, scopeOfMethod } from "./auth-deadline";
import { isPostConnectEvent, newPostConnectEvent, postChallenge, unrefSleep, type PostConnectEvent } from "../../shared/events/challenge";
import { deliverFrame } from "../../shared/events/delivery";
import { ApiError } from "../../shared/protocol/errors";
import { errorFrame, okFrame, RequestFrameSchema, type RequestFrame } from "../../shared/protocol/frames";
import { internalError, internalErrorLog } from "../../shared/protocol/internal-error";
import type { AppDeps } from "../../shared/runtime/app-deps";
import { AUTHENTICATED_METHODS, CONNECT_METHOD, FrameReply } from "./methods";
import { answerExhaustedFrames, isSqsEvent } from "./retries-exhausted";

/** The subset of API Gateway's WebSocket route event this handler reads. */
export interface WebSocketRouteEvent {
  requestContext: { routeKey: string; connectionId: string; eventType?: string; requestTimeEpoch?: number; authorizer?: Record<string, unknown> | null };
  headers?: Record<string, string | undefined> | null;
  body?: string | null;
}

export interface WebSocketRouteResult {
  statusCode: number;
  headers?: Record<string, string>;
}

/**
 * WebSocket API. $connect registers the connection and schedules the
 * `connect.challenge` post for right after it returns (API Gateway refuses
 * posts until then); that scheduled step arrives back here as a
 * post-connect event. $disconnect removes the connection. Every other route
 * is a `req` frame answered with one `res` frame through the Management API
 * (so the answer works the same whether or not API Gateway still waits on
 * this invocation).
 */
export function createWebSocketHandler(deps: AppDeps) {
  return middy<WebSocketRouteEvent | PostConnectEvent | SQSEvent, WebSocketRouteResult | SQSBatchResponse, Error, Context>().handler(async (event, context) => {
    // Frames whose invocation failed every retry (Lambda's failure records): the client gets its answer.
    if (isSqsEvent(event)) return answerExhaustedFrames(deps, event);
    if (isPostConnectEvent(event)) {
      await postChallenge(deps, event);
      await closeIfStillAnonymous(deps, event.connectionId, event.ts);
      return { statusCode: 200 };
    }
    const { routeKey, connectionId } = event.requestContext;
    if (routeKey === "$connect") {
      await onConnect(deps, connectionId, callerFromContext(event.requestContext.authorizer));
      return connectAnswer(event);
    }
    if (routeKey === "$disconnect") {
      await removeConnection(deps.db, connectionId);
      return { statusCode: 200 };
    }
    const response = await answer(deps, connectionId, event.body ?? "", context);
    await deliverFrame(deps.pusher, connectionId, response).catch((error: unknown) => {
      // Not rethrown: method routes are invoked asynchronously, and Lambda would retry the whole method (a second run).
      deps.log.warn("response delivery failed", { connectionId, error: String(error) });
    });
    // The last refused `connect` closes the socket, once its answer is out.
    if (isClosingRefusal(response)) await deps.pusher.disconnect(connectionId).catch(() => undefined);
    return { statusCode: 200 };
  });
}

async function onConnect(deps: AppDeps, connectionId: string, caller: Caller | undefined): Promise<void> {
  const step = newPostConnectEvent(connectionId, deps.db.now());
  await putConnection(deps.db, connectionId, step.nonce, caller);
  if (!deps.invokeSelfAsync) {
    // Local stack: the process keeps running after we return, so the step runs here, detached.
    const detached = { ...deps, sleep: unrefSleep };
    void postChallenge(detached, step)
      .then(() => closeIfStillAnonymous(detached, connectionId, step.ts))
      .catch((error: unknown) => deps.log.warn("connect.challenge failed", { connectionId, error: String(error) }));
    return;
  }
  // The connection must not fail because the challenge could not be scheduled: the client then times out itself.
  await deps.invokeSelfAsync({ ...step }).catch((error: unknown) => deps.log.error("could not schedule connect.challenge", { connectionId, error: String(error) }));
}

/**
 * Methods whose unexpected failure (a throttled store, a crash between
 * intake's writes) is left to Lambda's asynchronous retry (infra/async-invocations.ts)
 * instead of answered: `agent` is idempotent and its failure may come after
 * the message joined its lane. Other methods answer `INTERNAL` at once.
 */
const RETRIED_ON_FAILURE: ReadonlySet<string> = new Set(["agent"]);

async function answer(deps: AppDeps, connectionId: string, body: string, context: Context): Promise<unknown> {
  const frame = parseFrame(body);
  if (!frame.ok) return errorFrame(frame.id, frame.error.toBody());
  const request = frame.request;
  try {
    const result = await invoke(deps, connectionId, request, context);
    return result instanceof FrameReply ? result.frame : okFrame(request.id, result);
  } catch (error) {
    if (error instanceof ApiError) return errorFrame(request.id, error.toBody());
    if (RETRIED_ON_FAILURE.has(request.method)) {
      // Lambda's async retry runs the frame again (idempotent: its key comes from connection + request id).
      // An `internal error` answer here would tell the client its message failed while it may already be in its lane.
      deps.log.error("WebSocket method failed; Lambda retries the frame", { method: request.method, ...internalErrorLog(error, context.awsRequestId) });
      throw error;
    }
    deps.log.error("unhandled WebSocket method error", { method: request.method, ...internalErrorLog(error, context.awsRequestId) });
    return errorFrame(request.id, internalError(context.awsRequestId).toBody());
  }
}

async function invoke(deps: AppDeps, connectionId: string, request: RequestFrame, context: Context): Promise<unknown> {
  const input = { connectionId, requestId: request.id, params: request.params, context };
  if (request.method === "connect") return CONNECT_METHOD(deps, input);
  // Own properties only: `constructor`, `toString`, `__proto__` are not methods.
  const method = Object.hasOwn(AUTHENTICATED_METHODS, request.method) ? AUTHENTICATED_METHODS[request.method] : undefined;
  if (!method) throw new ApiError("UNKNOWN_METHOD", `unknown method "${request.method}"`);
  const connection = await getConnection(deps.db, connectionId);
  if (!connection?.authenticated) throw new ApiError("UNAUTHORIZED", "send `connect` with a valid token first");
  const caller = connectionCaller(connection);
  requireScope(caller, scopeOfMethod(request.method));
  const admitted = enforceRateLimit(deps.db, caller, DEFAULT_RATE_LIMIT_PER_MINUTE);
  if (!COUNTED_ALONGSIDE.has(request.method)) {
    await admitted;
    return method(deps, { ...input, connection, caller });
  }
  admitted.catch(() => undefined); // the method awaits it before its first write
  return method(deps, { ...input, connection, caller, admitted });
}

/**
 * Methods that make their first reads while the rate limit's counter is
 * written (one round trip less before a message is accepted); they write
 * nothing, and answer nothing but RATE_LIMITED, until it has settled.
 */
const COUNTED_ALONGSIDE: ReadonlySet<string> = new Set(["agent"]);

/** Connections authenticated before keys carried tenants act as the deployment token did. */
function connectionCaller(connection: ConnectionRecord): Caller {
  return connection.caller ?? { ...DEPLOYMENT_TOKEN_CALLER, scopes: (connection.scopes ?? []).filter(isScope) };
}

/** $connect accepts; a browser that offered subprotocols gets one back (it fails the handshake otherwise). */
function connectAnswer(event: WebSocketRouteEvent): WebSocketRouteResult {
  const offered = Object.entries(event.headers ?? {}).find(([name]) => name.toLowerCase() === "sec-websocket-protocol")?.[1];
  const protocol = chosenProtocol(offered);
  return protocol ? { statusCode: 200, headers: { "Sec-WebSocket-Protocol": protocol } } : { statusCode: 200 };
}

function isClosingRefusal(frame: unknown): boolean {
  const error = (frame as { ok?: boolean; error?: { details?: { closing?: unknown } } }).error;
  return (frame as { ok?: boolean }).ok === false && error?.details?.closing === true;
}

type ParsedFrame = { ok: true; request: RequestFrame } | { ok: false; id: string | null; error: ApiError };

function parseFrame(body: string): ParsedFrame {
  let raw: unknown;
  try {
    raw = JSON.parse(body);
  } catch {
    return { ok: false, id: null, error: new ApiError("INVALID_REQUEST", "frame is not valid JSON") };
  }
  const parsed = RequestFrameSchema.safeParse(raw);
  if (parsed.success) return { ok: true, request: parsed.data };
  const id = typeof (raw as { id?: unknown })?.id === "string" ? (raw as { id: string }).id : null;
  return { ok: false, id, error: new ApiError("INVALID_REQUEST", "frame must be {type:\"req\", id, method, params}") };
}
