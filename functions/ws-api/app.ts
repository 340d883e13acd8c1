import type { Context } from "aws-lambda";
import middy from "@middy/core";
import { getConnection, putConnection, removeConnection } from "../../shared/aws/connections";
import { ApiError } from "../../shared/protocol/errors";
import { errorFrame, okFrame, RequestFrameSchema, type RequestFrame } from "../../shared/protocol/frames";
import type { AppDeps } from "../../shared/runtime/app-deps";
import { AUTHENTICATED_METHODS, CONNECT_METHOD } from "./methods";

/** The subset of API Gateway's WebSocket route event this handler reads. */
export interface WebSocketRouteEvent {
  requestContext: { routeKey: string; connectionId: string; eventType?: string };
  body?: string | null;
}

export interface WebSocketRouteResult {
  statusCode: number;
}

/**
 * WebSocket API: $connect registers the connection (unauthenticated until the
 * `connect` method presents the token), $disconnect removes it, every other
 * route is a `req` frame answered with one `res` frame through the
 * Management API (so the answer works the same whether or not API Gateway
 * still waits on this invocation).
 */
export function createWebSocketHandler(deps: AppDeps) {
  return middy<WebSocketRouteEvent, WebSocketRouteResult, Error, Context>().handler(async (event, context) => {
    const { routeKey, connectionId } = event.requestContext;
    if (routeKey === "$connect") {
      await putConnection(deps.db, connectionId);
      return { statusCode: 200 };
    }
    if (routeKey === "$disconnect") {
      await removeConnection(deps.db, connectionId);
      return { statusCode: 200 };
    }
    const response = await answer(deps, connectionId, event.body ?? "", context);
    await deps.pusher.push(connectionId, response);
    return { statusCode: 200 };
  });
}

async function answer(deps: AppDeps, connectionId: string, body: string, context: Context): Promise<unknown> {
  const frame = parseFrame(body);
  if (!frame.ok) return errorFrame(frame.id, frame.error.toBody());
  const request = frame.request;
  try {
    return okFrame(request.id, await invoke(deps, connectionId, request, context));
  } catch (error) {
    if (error instanceof ApiError) return errorFrame(request.id, error.toBody());
    deps.log.error("unhandled WebSocket method error", { method: request.method, error: String(error) });
    return errorFrame(request.id, { code: "INTERNAL", message: "internal error" });
  }
}

async function invoke(deps: AppDeps, connectionId: string, request: RequestFrame, context: Context): Promise<unknown> {
  const input = { connectionId, params: request.params, context };
  if (request.method === "connect") return CONNECT_METHOD(deps, input);
  const method = AUTHENTICATED_METHODS[request.method];
  if (!method) throw new ApiError("UNKNOWN_METHOD", `unknown method "${request.method}"`);
  const connection = await getConnection(deps.db, connectionId);
  if (!connection?.authenticated) throw new ApiError("UNAUTHORIZED", "send `connect` with a valid token first");
  return method(deps, input);
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
