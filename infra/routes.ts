/**
 * API surface shared by the CDK stack and the local front door, so both
 * expose exactly the same routes. Pure data: importing this file must not
 * load aws-cdk-lib.
 */

/** API Gateway stage name of both APIs (also the Management API path prefix). */
export const REST_STAGE_NAME = "prod";
export const WS_STAGE_NAME = "prod";

/**
 * REST resources outside the API-key authorizer: they verify their callers
 * themselves (channel webhooks and signed hooks check the platform's
 * signature; health and the OpenAPI document answer nothing secret). Everything else is `ANY /` and
 * `ANY /{proxy+}` behind the authorizer.
 */
export const PUBLIC_REST_RESOURCES: readonly { path: string; method: string }[] = [
  { path: "/health", method: "GET" },
  { path: "/openapi.json", method: "GET" },
  { path: "/v1/hooks/{proxy+}", method: "ANY" },
  { path: "/v1/channels/{proxy+}", method: "ANY" },
];

/** WebSocket frames are `{type:"req", id, method, params}`: route on `method`. */
export const WS_ROUTE_SELECTION_EXPRESSION = "$request.body.method";

/** API Gateway's built-in WebSocket routes. */
export const WS_SYSTEM_ROUTES = ["$connect", "$disconnect", "$default"] as const;

/**
 * Protocol methods that get their own route (anything else lands on
 * `$default`, which answers with an "unknown method" error).
 */
export const WS_METHOD_ROUTES = [
  "connect",
  "agent",
  "agent.wait",
  "sessions.subscribe",
  "sessions.unsubscribe",
  "sessions.list",
  "sessions.history",
  "runs.abort",
  "events.replay",
  // OpenClaw CLI compatibility (docs/protocol.md).
  "agents.list",
  "chat.abort",
  // OpenClaw's approval resolve methods (docs/approvals.md).
  "plugin.approval.resolve",
  "exec.approval.resolve",
  // A client tool's result (docs/client-tools.md).
  "tools.result",
  // OpenClaw's TUI (docs/protocol.md, "OpenClaw TUI").
  "chat.send",
  "chat.history",
  "sessions.resolve",
  "sessions.describe",
  "sessions.reset",
  "sessions.patch",
  "models.list",
  "commands.list",
  "status",
  "config.get",
] as const;

export type WsMethodRoute = (typeof WS_METHOD_ROUTES)[number];
export type WsRouteKey = (typeof WS_SYSTEM_ROUTES)[number] | WsMethodRoute;

/** Every route key the WebSocket API declares, all integrated with `ws-api`. */
export const WS_ROUTE_KEYS: readonly WsRouteKey[] = [...WS_SYSTEM_ROUTES, ...WS_METHOD_ROUTES];

/**
 * No route returns its Lambda result to the caller: every `res` frame is
 * posted through the Management API, so the same code answers whether it
 * took 10 ms or (agent.wait) longer than API Gateway's 29 s integration limit.
 */
export function wsRouteReturnsResponse(_routeKey: WsRouteKey): boolean {
  return false;
}

/** Method routes (and `$default`) run asynchronously; connect/disconnect must be synchronous. */
export function wsRouteInvokesAsync(routeKey: WsRouteKey): boolean {
  return routeKey !== "$connect" && routeKey !== "$disconnect";
}
