import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from "aws-lambda";
import middy from "@middy/core";
import type { Scope } from "../../shared/core/access";
import { errorResult, json } from "../../shared/http/rest";
import { ApiError } from "../../shared/protocol/errors";
import { internalError, internalErrorLog } from "../../shared/protocol/internal-error";
import type { AppDeps } from "../../shared/runtime/app-deps";
import { pathParams } from "./path-params";
import { getRunTrace, getSessions } from "./console-routes";
import { admitRestCaller } from "./caller";
import { CHANNEL_ROUTES } from "./channel-routes";
import { postApproval } from "./approvals";
import { postToolResult } from "./tool-results";
import { getHistory, getRunEvents, getRunRoute, postAbort, postAgent, postWait, type PublicRoute, type Route } from "./routes";
// The checked-in OpenAPI document (npm run docs:api), bundled with the function.
import openApiDocument from "../../docs/openapi.json";

/** What the caller's key must hold (docs/security.md); `public`: the route verifies its caller itself (channel webhooks). */
type RouteEntry =
  | { method: string; pattern: RegExp; route: Route; scope: Scope }
  | { method: string; pattern: RegExp; route: PublicRoute; scope: "public" };

/** The REST surface. Path parameters are URL-decoded named groups, validated in path-params.ts. */
const ROUTES: RouteEntry[] = [
  { method: "POST", pattern: /^\/v1\/agent$/, route: postAgent, scope: "operator.write" },
  { method: "POST", pattern: /^\/v1\/runs\/(?<runId>[^/]+)\/wait$/, route: postWait, scope: "operator.read" },
  { method: "GET", pattern: /^\/v1\/runs\/(?<runId>[^/]+)$/, route: getRunRoute, scope: "operator.read" },
  { method: "GET", pattern: /^\/v1\/runs\/(?<runId>[^/]+)\/events$/, route: getRunEvents, scope: "operator.read" },
  { method: "POST", pattern: /^\/v1\/runs\/(?<runId>[^/]+)\/abort$/, route: postAbort, scope: "operator.write" },
  { method: "POST", pattern: /^\/v1\/runs\/(?<runId>[^/]+)\/approvals\/(?<approvalId>[^/]+)$/, route: postApproval, scope: "operator.approvals" },
  { method: "POST", pattern: /^\/v1\/runs\/(?<runId>[^/]+)\/tool-results$/, route: postToolResult, scope: "operator.write" },
  { method: "GET", pattern: /^\/v1\/sessions\/(?<sessionKey>[^/]+)\/history$/, route: getHistory, scope: "operator.read" },
  // Read-only, for the web console (console-routes.ts).
  { method: "GET", pattern: /^\/v1\/sessions$/, route: getSessions, scope: "operator.read" },
  { method: "GET", pattern: /^\/v1\/runs\/(?<runId>[^/]+)\/trace$/, route: getRunTrace, scope: "operator.read" },
  // Channel webhooks: verified by the platform's signature (channel-routes.ts), not by an API key.
  ...CHANNEL_ROUTES.map((entry) => ({ ...entry, scope: "public" as const })),
];

export function createRestHandler(deps: AppDeps) {
  return middy<APIGatewayProxyEvent, APIGatewayProxyResult, Error, Context>().handler(async (event, context) => {
    try {
      return await dispatch(deps, event, context);
    } catch (error) {
      if (error instanceof ApiError) return errorResult(error);
      const requestId = event.requestContext?.requestId ?? context.awsRequestId;
      deps.log.error("unhandled REST error", { ...internalErrorLog(error, requestId), path: event.path });
      return errorResult(internalError(requestId));
    }
  });
}

async function dispatch(deps: AppDeps, event: APIGatewayProxyEvent, context: Context): Promise<APIGatewayProxyResult> {
  const path = stripStage(event);
  if (event.httpMethod === "GET" && path === "/health") return json(200, { ok: true });
  if (event.httpMethod === "GET" && path === "/openapi.json") return json(200, openApiDocument);
  const matches = ROUTES.map((entry) => ({ entry, match: entry.pattern.exec(path) })).filter((m) => m.match);
  if (matches.length === 0) throw new ApiError("NOT_FOUND", `no route for ${event.httpMethod} ${path}`);
  const hit = matches.find((m) => m.entry.method === event.httpMethod);
  if (!hit) return methodNotAllowed(event.httpMethod, matches.map((m) => m.entry.method));
  const params = pathParams(hit.match!.groups ?? {});
  const { entry } = hit;
  if (entry.scope === "public") return entry.route(deps, { event, params, context });
  const caller = await admitRestCaller(deps, event, entry.scope);
  return entry.route(deps, { event, params, context, caller });
}

/** `event.path` has no stage prefix behind a custom domain but may on the default endpoint. */
function stripStage(event: APIGatewayProxyEvent): string {
  const stage = event.requestContext?.stage;
  const path = event.path || "/";
  return stage && path.startsWith(`/${stage}/`) ? path.slice(stage.length + 1) : path;
}

function methodNotAllowed(method: string, allowed: string[]): APIGatewayProxyResult {
  const result = json(405, { error: { code: "INVALID_REQUEST", message: `method ${method} not allowed` } });
  return { ...result, headers: { ...result.headers, allow: allowed.join(", ") } };
}
