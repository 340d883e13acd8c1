/**
 * The one path router both HTTP functions use (functions/rest-api,
 * functions/openai-api). Routes are written like API Gateway resources
 * (`/v1/runs/{runId}/wait`; `{id+}` takes the rest of the path, slashes
 * included); a request resolves to its route with its raw parameters
 * (decodePathParams decodes them, when the app is ready to answer a 400),
 * to the methods its path allows (a 405 or a 404 is the app's choice), or
 * to nothing.
 *
 * Why not @aws-lambda-powertools/event-handler's Router: it answers a known
 * path with a wrong method as a 404 (no 405 with `allow`), lets a malformed
 * percent-escape surface as a bare URIError, converts every event into a web
 * Request/Response, and streams only a Response its handler returns, where
 * the OpenAI function writes its SSE answer into a sink as the run goes
 * (README, dependency notes).
 */
import type { APIGatewayProxyEvent } from "aws-lambda";
import { ApiError } from "../protocol/errors";

export interface RouteDefinition<R> {
  method: string;
  /** `/literal/{name}/…`; `{name+}` (last segment only) matches one or more segments. */
  path: string;
  route: R;
}

export type Resolution<R> =
  | { kind: "found"; route: R; rawParams: Record<string, string> }
  | { kind: "method-not-allowed"; allowed: string[] }
  | { kind: "not-found" };

export interface Router<R> {
  resolve(method: string, path: string): Resolution<R>;
}

interface CompiledRoute<R> {
  definition: RouteDefinition<R>;
  pattern: RegExp;
}

export function createRouter<R>(definitions: readonly RouteDefinition<R>[]): Router<R> {
  const compiled: CompiledRoute<R>[] = definitions.map((definition) => ({ definition, pattern: compilePath(definition.path) }));
  return {
    resolve(method, path) {
      const matches = compiled.map((entry) => ({ entry, match: entry.pattern.exec(path) })).filter((m) => m.match !== null);
      if (matches.length === 0) return { kind: "not-found" };
      const hit = matches.find((m) => m.entry.definition.method === method);
      if (!hit) return { kind: "method-not-allowed", allowed: matches.map((m) => m.entry.definition.method) };
      return { kind: "found", route: hit.entry.definition.route, rawParams: definedGroups(hit.match!.groups) };
    },
  };
}

/** `{name}` is one segment, `{name+}` the rest of the path; everything else is literal. */
function compilePath(path: string): RegExp {
  const source = path
    .split("/")
    .map((segment) => {
      const param = /^\{([A-Za-z_]\w*)(\+?)\}$/.exec(segment);
      if (!param) return segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      return param[2] ? `(?<${param[1]}>.+)` : `(?<${param[1]}>[^/]+)`;
    })
    .join("/");
  return new RegExp(`^${source}$`);
}

function definedGroups(groups: Record<string, string | undefined> | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(groups ?? {}).filter((entry): entry is [string, string] => entry[1] !== undefined));
}

/** A malformed escape (`/v1/runs/%ZZ`) is the caller's 400, never a URIError later. */
export function decodePathParams(rawParams: Record<string, string>): Record<string, string> {
  const params: Record<string, string> = {};
  for (const [name, raw] of Object.entries(rawParams)) {
    try {
      params[name] = decodeURIComponent(raw);
    } catch {
      throw new ApiError("INVALID_REQUEST", `path parameter ${name} has a malformed percent-encoding`);
    }
  }
  return params;
}

/** `event.path` has no stage prefix behind a custom domain but may on the default endpoint. */
export function requestPath(event: APIGatewayProxyEvent): string {
  const stage = event.requestContext?.stage;
  const path = event.path || "/";
  return stage && path.startsWith(`/${stage}/`) ? path.slice(stage.length + 1) : path;
}
