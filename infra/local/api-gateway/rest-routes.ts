import type { LocalRestRoute } from "./types";

export interface MatchedRoute {
  route: LocalRestRoute;
  /** `{proxy: "v1/agent"}` for a greedy resource, null for a literal one. */
  pathParameters: Record<string, string> | null;
}

export type RouteMatch = { kind: "matched"; matched: MatchedRoute } | { kind: "noMethod" } | { kind: "noResource" };

/**
 * API Gateway's resource selection: a literal resource path beats a greedy
 * `{proxy+}` one, and the longest greedy prefix wins among those. The method
 * is then looked up on that resource only (an exact verb beats `ANY`).
 */
export function matchRestRoute(routes: readonly LocalRestRoute[], rawPath: string, httpMethod: string): RouteMatch {
  const byResource = new Map<string, LocalRestRoute[]>();
  for (const route of routes) byResource.set(route.resourcePath, [...(byResource.get(route.resourcePath) ?? []), route]);
  const resource = selectResource([...byResource.keys()], rawPath);
  if (resource === undefined) return { kind: "noResource" };
  const methods = byResource.get(resource)!;
  const route = methods.find((r) => r.httpMethod === httpMethod) ?? methods.find((r) => r.httpMethod === "ANY");
  if (!route) return { kind: "noMethod" };
  return { kind: "matched", matched: { route, pathParameters: greedyParameters(resource, rawPath) } };
}

function selectResource(resources: string[], rawPath: string): string | undefined {
  if (resources.includes(rawPath) && !rawPath.includes("{")) return rawPath;
  const greedy = resources
    .filter((r) => r.endsWith("/{proxy+}"))
    .map((r) => ({ resource: r, prefix: r.slice(0, -"{proxy+}".length) }))
    .filter(({ prefix }) => rawPath.startsWith(prefix) && rawPath.length > prefix.length)
    .sort((a, b) => b.prefix.length - a.prefix.length);
  return greedy[0]?.resource;
}

function greedyParameters(resource: string, rawPath: string): Record<string, string> | null {
  if (!resource.endsWith("/{proxy+}")) return null;
  return { proxy: decodePathSafely(rawPath.slice(resource.length - "{proxy+}".length)) };
}

/** Path parameters arrive decoded; a malformed escape is passed through rather than failing the request. */
function decodePathSafely(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}
