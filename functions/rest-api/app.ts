import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from "aws-lambda";
import middy from "@middy/core";
import { authenticate, bearerToken } from "../../shared/runtime/auth";
import { errorResult, header, json } from "../../shared/http/rest";
import { ApiError } from "../../shared/protocol/errors";
import type { AppDeps } from "../../shared/runtime/app-deps";
import { postApproval } from "./approvals";
import { getHistory, getRunEvents, getRunRoute, postAbort, postAgent, postWait, type Route } from "./routes";

interface RouteEntry {
  method: string;
  pattern: RegExp;
  route: Route;
}

/** The REST surface. Path parameters are URL-decoded named groups. */
const ROUTES: RouteEntry[] = [
  { method: "POST", pattern: /^\/v1\/agent$/, route: postAgent },
  { method: "POST", pattern: /^\/v1\/runs\/(?<runId>[^/]+)\/wait$/, route: postWait },
  { method: "GET", pattern: /^\/v1\/runs\/(?<runId>[^/]+)$/, route: getRunRoute },
  { method: "GET", pattern: /^\/v1\/runs\/(?<runId>[^/]+)\/events$/, route: getRunEvents },
  { method: "POST", pattern: /^\/v1\/runs\/(?<runId>[^/]+)\/abort$/, route: postAbort },
  { method: "POST", pattern: /^\/v1\/runs\/(?<runId>[^/]+)\/approvals\/(?<approvalId>[^/]+)$/, route: postApproval },
  { method: "GET", pattern: /^\/v1\/sessions\/(?<sessionKey>[^/]+)\/history$/, route: getHistory },
];

export function createRestHandler(deps: AppDeps) {
  return middy<APIGatewayProxyEvent, APIGatewayProxyResult, Error, Context>().handler(async (event, context) => {
    try {
      return await dispatch(deps, event, context);
    } catch (error) {
      if (error instanceof ApiError) return errorResult(error);
      deps.log.error("unhandled REST error", { error: String(error), path: event.path });
      return errorResult(new ApiError("INTERNAL", "internal error"));
    }
  });
}

async function dispatch(deps: AppDeps, event: APIGatewayProxyEvent, context: Context): Promise<APIGatewayProxyResult> {
  const path = stripStage(event);
  if (event.httpMethod === "GET" && path === "/health") return json(200, { ok: true });
  const matches = ROUTES.map((entry) => ({ entry, match: entry.pattern.exec(path) })).filter((m) => m.match);
  if (matches.length === 0) throw new ApiError("NOT_FOUND", `no route for ${event.httpMethod} ${path}`);
  const hit = matches.find((m) => m.entry.method === event.httpMethod);
  if (!hit) return methodNotAllowed(event.httpMethod, matches.map((m) => m.entry.method));
  if (!(await authenticate(deps.db, bearerToken(header(event, "authorization")), deps.runtime.authTokenSha256))) {
    throw new ApiError("UNAUTHORIZED", "missing or invalid bearer token");
  }
  const params = Object.fromEntries(Object.entries(hit.match!.groups ?? {}).map(([k, v]) => [k, decodeURIComponent(v)]));
  return hit.entry.route(deps, { event, params, context });
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
