/**
 * Lambda REQUEST authorizers as API Gateway runs them: the function gets the
 * request's headers, query and context plus `methodArn`; an `Allow` policy
 * whose resource covers the method lets the request through, with the
 * returned `context` (and `principalId`) in the integration's
 * `requestContext.authorizer`. A thrown `Unauthorized` is a 401, a deny or a
 * policy that does not cover the method a 403, anything else a 500. Results
 * are cached by the identity source values for the authorizer's TTL (REST);
 * a missing identity source is a 401 without invoking the function.
 *
 * No timer of the gateway's own: API Gateway's 29 s integration timeout does
 * not apply to authorizers, the function's own Timeout bounds it (the
 * sandbox pool enforces it from the invocation's start, after init, as Lambda
 * does), and a timed-out authorizer is a 500 like any failed one. A timer
 * here also counted the wait for a free local sandbox and the cold start:
 * under load, 25 concurrent first requests answered 500 "authorizer failure"
 * where AWS, which starts an environment per concurrent request (up to the
 * reserved 20), answers them all.
 */

export interface AuthorizerSpec {
  /** Invokes the authorizer function (in its sandbox, on the local stack). */
  invoke: (event: unknown) => Promise<unknown>;
  /** `method.request.header.Authorization`, `route.request.querystring.token`, ... (empty: no identity source, no cache). */
  identitySources: string[];
  /** AuthorizerResultTtlInSeconds (0: no cache). */
  ttlSeconds: number;
}

export type AuthorizerDecision =
  | { kind: "allow"; authorizer: Record<string, unknown> }
  | { kind: "deny"; statusCode: 401 | 403 | 500; message: string };

export interface RequestFacts {
  headers: Record<string, string>;
  query: Record<string, string> | null;
  methodArn: string;
  /** The rest of the authorizer event (type, path, requestContext, ...). */
  event: Record<string, unknown>;
}

export const UNAUTHORIZED = { kind: "deny", statusCode: 401, message: "Unauthorized" } as const;
const FORBIDDEN = { kind: "deny", statusCode: 403, message: "User is not authorized to access this resource with an explicit deny" } as const;

export class LocalAuthorizer {
  private readonly cache = new Map<string, { policy: ReturnType<typeof parseResult>; until: number }>();

  constructor(private readonly spec: AuthorizerSpec) {}

  async authorize(request: RequestFacts): Promise<AuthorizerDecision> {
    const identity = this.spec.identitySources.map((source) => identityValue(source, request));
    if (identity.some((value) => value === undefined || value === "")) return UNAUTHORIZED;
    const cacheKey = this.spec.ttlSeconds > 0 && identity.length > 0 ? JSON.stringify(identity) : undefined;
    const cached = cacheKey ? this.cache.get(cacheKey) : undefined;
    if (cached && cached.until > Date.now()) return decide(cached.policy, request.methodArn);
    const outcome = await this.invoke(request);
    if (outcome.kind === "threw") {
      const message = outcome.error instanceof Error ? outcome.error.message : String(outcome.error);
      return message === "Unauthorized" ? UNAUTHORIZED : { kind: "deny", statusCode: 500, message: "Internal server error" };
    }
    const policy = parseResult(outcome.value);
    // API Gateway caches allow and deny policies alike (not errors).
    if (cacheKey && policy) this.cache.set(cacheKey, { policy, until: Date.now() + this.spec.ttlSeconds * 1000 });
    return decide(policy, request.methodArn);
  }

  private async invoke(request: RequestFacts): Promise<{ kind: "returned"; value: unknown } | { kind: "threw"; error: unknown }> {
    try {
      const value = await this.spec.invoke({ ...request.event, methodArn: request.methodArn, headers: request.headers, queryStringParameters: request.query });
      return { kind: "returned", value };
    } catch (error) {
      return { kind: "threw", error };
    }
  }
}

interface Statement {
  Effect?: string;
  Action?: string | string[];
  Resource?: string | string[];
}

function parseResult(value: unknown): { principalId: string; statements: Statement[]; context: Record<string, unknown> } | undefined {
  const result = value as { principalId?: unknown; policyDocument?: { Statement?: unknown }; context?: unknown } | undefined;
  if (!result || typeof result.principalId !== "string" || !Array.isArray(result.policyDocument?.Statement)) return undefined;
  const context = typeof result.context === "object" && result.context !== null ? (result.context as Record<string, unknown>) : {};
  return { principalId: result.principalId, statements: result.policyDocument.Statement as Statement[], context };
}

function decide(policy: ReturnType<typeof parseResult>, methodArn: string): AuthorizerDecision {
  if (!policy) return { kind: "deny", statusCode: 500, message: "Internal server error" };
  const covering = policy.statements.filter((s) => list(s.Action).some((a) => a === "execute-api:Invoke" || a === "*") && list(s.Resource).some((r) => arnMatches(r, methodArn)));
  if (covering.length === 0 || covering.some((s) => s.Effect === "Deny")) return FORBIDDEN;
  // Context values reach the integration as strings, numbers and booleans, beside principalId.
  const context = Object.fromEntries(Object.entries(policy.context).filter(([, v]) => ["string", "number", "boolean"].includes(typeof v)));
  return { kind: "allow", authorizer: { ...context, principalId: policy.principalId } };
}

function list(value: string | string[] | undefined): string[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

/** IAM resource matching: `*` any run of characters, `?` one. */
export function arnMatches(pattern: string, arn: string): boolean {
  const regex = new RegExp(`^${pattern.split("").map((c) => (c === "*" ? ".*" : c === "?" ? "." : c.replace(/[.+^${}()|[\]\\]/g, "\\$&"))).join("")}$`);
  return regex.test(arn);
}

/** `method.request.header.X` / `route.request.header.X` (case-insensitive), `...querystring.Y`. */
function identityValue(source: string, request: RequestFacts): string | undefined {
  const header = /^(?:method|route)\.request\.header\.(.+)$/.exec(source);
  if (header) return Object.entries(request.headers).find(([name]) => name.toLowerCase() === header[1].toLowerCase())?.[1];
  const query = /^(?:method|route)\.request\.querystring\.(.+)$/.exec(source);
  if (query) return request.query?.[query[1]];
  return undefined;
}
