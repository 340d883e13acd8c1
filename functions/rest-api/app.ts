import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from "aws-lambda";
import middy from "@middy/core";
import type { Scope } from "../../shared/core/access";
import { json } from "../../shared/http/rest";
import { restErrorResponses } from "../../shared/http/rest-errors";
import { createRouter, decodePathParams, requestPath, type RouteDefinition } from "../../shared/http/router";
import { ApiError } from "../../shared/protocol/errors";
import type { AppDeps } from "../../shared/runtime/app-deps";
import { pathParams } from "./path-params";
import { getRunTrace, getSessions } from "./console-routes";
import { admitRestCaller } from "../../shared/runtime/admit-rest-caller";
import { CHANNEL_ROUTES } from "./channel-routes";
import { postApproval } from "./approvals";
import { postToolResult } from "./tool-results";
import { getHistory, getRunEvents, getRunRoute, postAbort, postAgent, postWait, type PublicRoute, type Route } from "./routes";

/** What the caller's key must hold (docs/security.md); `public`: the route verifies its caller itself (channel webhooks). */
type RestRoute = { route: Route; scope: Scope } | { route: PublicRoute; scope: "public" };

const route = (method: string, path: string, handler: Route, scope: Scope): RouteDefinition<RestRoute> => ({ method, path, route: { route: handler, scope } });

/** The REST surface. Path parameters arrive percent-decoded and are validated in path-params.ts. */
const ROUTER = createRouter<RestRoute>([
  route("POST", "/v1/agent", postAgent, "operator.write"),
  route("POST", "/v1/runs/{runId}/wait", postWait, "operator.read"),
  route("GET", "/v1/runs/{runId}", getRunRoute, "operator.read"),
  route("GET", "/v1/runs/{runId}/events", getRunEvents, "operator.read"),
  route("POST", "/v1/runs/{runId}/abort", postAbort, "operator.write"),
  route("POST", "/v1/runs/{runId}/approvals/{approvalId}", postApproval, "operator.approvals"),
  route("POST", "/v1/runs/{runId}/tool-results", postToolResult, "operator.write"),
  route("GET", "/v1/sessions/{sessionKey}/history", getHistory, "operator.read"),
  // Read-only, for the web console (console-routes.ts).
  route("GET", "/v1/sessions", getSessions, "operator.read"),
  route("GET", "/v1/runs/{runId}/trace", getRunTrace, "operator.read"),
  // Channel webhooks: verified by the platform's signature (channel-routes.ts), not by an API key.
  ...CHANNEL_ROUTES.map(({ method, path, route: handler }) => ({ method, path, route: { route: handler, scope: "public" as const } })),
]);

export function createRestHandler(deps: AppDeps) {
  return middy<APIGatewayProxyEvent, APIGatewayProxyResult, Error, Context>()
    .use(restErrorResponses(deps.log))
    .handler((event, context) => dispatch(deps, event, context));
}

async function dispatch(deps: AppDeps, event: APIGatewayProxyEvent, context: Context): Promise<APIGatewayProxyResult> {
  const path = requestPath(event);
  if (event.httpMethod === "GET" && path === "/health") return json(200, { ok: true });
  if (event.httpMethod === "GET" && path === "/openapi.json") return json(200, await openApiDocument());
  const resolution = ROUTER.resolve(event.httpMethod, path);
  if (resolution.kind === "not-found") throw new ApiError("NOT_FOUND", `no route for ${event.httpMethod} ${path}`);
  if (resolution.kind === "method-not-allowed") return methodNotAllowed(event.httpMethod, resolution.allowed);
  const params = pathParams(decodePathParams(resolution.rawParams));
  const entry = resolution.route;
  if (entry.scope === "public") return entry.route(deps, { event, params, context });
  const caller = await admitRestCaller(deps, event, entry.scope);
  return entry.route(deps, { event, params, context, caller });
}

/**
 * The checked-in OpenAPI document (npm run docs:api), bundled with the function as a chunk of its own:
 * 100 KB of JSON that the import does not parse for the few requests that ask for it (issue 15).
 */
async function openApiDocument(): Promise<unknown> {
  return (await import("../../docs/openapi.json")).default;
}

function methodNotAllowed(method: string, allowed: string[]): APIGatewayProxyResult {
  const result = json(405, { error: { code: "INVALID_REQUEST", message: `method ${method} not allowed` } });
  return { ...result, headers: { ...result.headers, allow: allowed.join(", ") } };
}
