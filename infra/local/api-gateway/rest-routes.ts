/**
 * REST API resources as API Gateway matches them: a request path selects the
 * most specific resource (per segment: a literal beats `{param}`, which beats
 * `{proxy+}`), then the method on it (`ANY` when no exact one). Built from
 * the template's AWS::ApiGateway::Resource / Method items by the deployer.
 */
import type { LocalAuthorizer } from "./authorizer";
import type { RestHandler, RestStreamHandler } from "./types";

export interface LocalRestRoute {
  /** `GET`, `POST`, … or `ANY`. */
  httpMethod: string;
  /** `/`, `/{proxy+}`, `/v1/chat/completions/{id}`. */
  resourcePath: string;
  /** The integration's TimeoutInMillis (API Gateway: 29 s buffered, up to 15 min streamed). */
  timeoutMs?: number;
  /** Buffered Lambda proxy integration. */
  handler?: RestHandler;
  /** `responseTransferMode: STREAM`: InvokeWithResponseStream, body piped as written. */
  streamHandler?: RestStreamHandler;
  /** The method's `CUSTOM` (Lambda REQUEST) authorizer, run before the integration. */
  authorizer?: LocalAuthorizer;
}

export interface RouteMatch {
  route: LocalRestRoute;
  pathParameters: Record<string, string> | null;
}

type Specificity = number[];

function segmentsOf(path: string): string[] {
  return path.split("/").filter((part) => part.length > 0);
}

/** Path parameters of `rawPath` under `resourcePath`, with each segment's kind; undefined when it does not match. */
function matchResource(resourcePath: string, requestSegments: string[]): { params: Record<string, string>; specificity: Specificity } | undefined {
  const parts = segmentsOf(resourcePath);
  const params: Record<string, string> = {};
  const specificity: Specificity = [];
  for (let i = 0; i < parts.length; i += 1) {
    const part = parts[i]!;
    const greedy = /^\{(.+)\+\}$/.exec(part);
    if (greedy) {
      if (i !== parts.length - 1 || requestSegments.length <= i) return undefined;
      params[greedy[1]!] = requestSegments.slice(i).map(decodeSafely).join("/");
      specificity.push(2);
      return { params, specificity };
    }
    const segment = requestSegments[i];
    if (segment === undefined) return undefined;
    const param = /^\{(.+)\}$/.exec(part);
    if (param) {
      params[param[1]!] = decodeSafely(segment);
      specificity.push(1);
    } else if (part === segment) {
      specificity.push(0);
    } else {
      return undefined;
    }
  }
  return requestSegments.length === parts.length ? { params, specificity } : undefined;
}

function moreSpecific(a: Specificity, b: Specificity): boolean {
  for (let i = 0; i < Math.min(a.length, b.length); i += 1) if (a[i] !== b[i]) return a[i]! < b[i]!;
  return a.length > b.length;
}

/** `undefined`: no resource matches, or the resource has no such method (AWS: 403 Missing Authentication Token). */
export function selectRoute(routes: readonly LocalRestRoute[], method: string, rawPath: string): RouteMatch | undefined {
  const segments = segmentsOf(rawPath);
  let best: { resourcePath: string; params: Record<string, string>; specificity: Specificity } | undefined;
  for (const resourcePath of new Set(routes.map((route) => route.resourcePath))) {
    const match = matchResource(resourcePath, segments);
    if (match && (!best || moreSpecific(match.specificity, best.specificity))) best = { resourcePath, ...match };
  }
  if (!best) return undefined;
  const onResource = routes.filter((route) => route.resourcePath === best!.resourcePath);
  const route = onResource.find((r) => r.httpMethod === method) ?? onResource.find((r) => r.httpMethod === "ANY");
  if (!route) return undefined;
  return { route, pathParameters: Object.keys(best.params).length > 0 ? best.params : null };
}

function decodeSafely(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}
