/**
 * Who may do what, as pure data and functions (no AWS, no HTTP): the scopes
 * of an API key, the caller a request acts as, and the credential a request
 * carries. The authorizer, the REST handler and the WebSocket handler all
 * decide with these.
 */

/** OpenClaw's operator scopes; `operator.admin` covers every other one. */
export const SCOPES = ["operator.read", "operator.write", "operator.approvals", "operator.admin"] as const;
export type Scope = (typeof SCOPES)[number];

/** The tenant of the deployment's own token (AUTH_TOKEN_SHA256) and of `npm start`'s dev token; records without a tenant belong to it. */
export const DEFAULT_TENANT = "local";

/** Requests per minute per key unless the key sets its own (`npm run keys -- create --rate-limit N`). */
export const DEFAULT_RATE_LIMIT_PER_MINUTE = 600;

/** The identity a request acts as, resolved once at the edge. */
export interface Caller {
  tenantId: string;
  keyId: string;
  keyName: string;
  scopes: Scope[];
  /** Models this key may ask for; absent = any configured model. */
  models?: string[];
  /** Requests per minute for this key (the per-key rate limit); absent = the configured default. */
  rateLimitPerMinute?: number;
}

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/** `operator.write` includes reading (a client that can start runs can follow them); admin includes everything. */
export function hasScope(granted: readonly Scope[], needed: Scope): boolean {
  if (granted.includes("operator.admin") || granted.includes(needed)) return true;
  return needed === "operator.read" && granted.includes("operator.write");
}

/**
 * What an in-band `connect` is granted: the requested scopes the key holds
 * (an admin key holds them all), or all of the key's scopes when the client
 * asks for none or only for scopes we do not know.
 */
export function grantScopes(keyScopes: readonly Scope[], requested: readonly string[] | undefined): Scope[] {
  const asked = (requested ?? []).filter(isScope).filter((scope) => hasScope(keyScopes, scope));
  return asked.length > 0 ? [...new Set(asked)] : [...keyScopes];
}

/** Sec-WebSocket-Protocol entry carrying a key for browsers, which cannot set headers: `bearer.<key>`. */
export const BEARER_PROTOCOL_PREFIX = "bearer.";

export interface CredentialSources {
  authorization?: string;
  /** `?token=` */
  queryToken?: string;
  /** Sec-WebSocket-Protocol, comma-separated. */
  protocols?: string;
}

/** The key a request presents: `Authorization: Bearer <key>`, else `?token=`, else a `bearer.<key>` subprotocol. */
export function presentedCredential(sources: CredentialSources): string | undefined {
  const bearer = /^Bearer\s+(.+)$/i.exec(sources.authorization ?? "")?.[1]?.trim();
  if (bearer) return bearer;
  if (sources.queryToken) return sources.queryToken;
  return offeredProtocols(sources.protocols).find((p) => p.startsWith(BEARER_PROTOCOL_PREFIX))?.slice(BEARER_PROTOCOL_PREFIX.length) || undefined;
}

export function offeredProtocols(header: string | undefined): string[] {
  return (header ?? "").split(",").map((p) => p.trim()).filter((p) => p.length > 0);
}

/**
 * The subprotocol $connect echoes (a browser fails the handshake when none of
 * its offers comes back): the first one that is not a credential, else the
 * credential itself.
 */
export function chosenProtocol(header: string | undefined): string | undefined {
  const offered = offeredProtocols(header);
  return offered.find((p) => !p.startsWith(BEARER_PROTOCOL_PREFIX)) ?? offered[0];
}

/** Authorizer context values must be strings, numbers or booleans. */
export type AuthorizerContext = Record<string, string | number | boolean>;

export function callerToContext(caller: Caller): AuthorizerContext {
  return {
    tenantId: caller.tenantId,
    keyId: caller.keyId,
    keyName: caller.keyName,
    scopes: caller.scopes.join(","),
    ...(caller.models ? { models: caller.models.join(",") } : {}),
    ...(caller.rateLimitPerMinute !== undefined ? { rateLimitPerMinute: caller.rateLimitPerMinute } : {}),
  };
}

/** The caller an authorizer context describes, or undefined when it carries none (anonymous WebSocket, or no authorizer). */
export function callerFromContext(context: Record<string, unknown> | null | undefined): Caller | undefined {
  if (!context || typeof context.tenantId !== "string" || typeof context.keyId !== "string") return undefined;
  const list = (value: unknown) => (typeof value === "string" && value.length > 0 ? value.split(",") : []);
  const rate = Number(context.rateLimitPerMinute);
  return {
    tenantId: context.tenantId,
    keyId: context.keyId,
    keyName: typeof context.keyName === "string" ? context.keyName : "",
    scopes: list(context.scopes).filter(isScope),
    ...(typeof context.models === "string" ? { models: list(context.models) } : {}),
    ...(Number.isFinite(rate) && context.rateLimitPerMinute !== undefined ? { rateLimitPerMinute: rate } : {}),
  };
}

/**
 * An IAM policy allowing every method and path of the stage the request came
 * to: the REST result is cached by key for all routes, so a policy naming
 * only this method would deny the key's next, different request.
 */
export function allowPolicy(methodArn: string, principalId: string, context: AuthorizerContext) {
  return {
    principalId,
    policyDocument: { Version: "2012-10-17", Statement: [{ Action: "execute-api:Invoke", Effect: "Allow", Resource: stageWildcard(methodArn) }] },
    context,
  };
}

/** `arn:aws:execute-api:r:a:api/stage/GET/v1/runs/x` -> `arn:aws:execute-api:r:a:api/stage/*` */
export function stageWildcard(methodArn: string): string {
  const [prefix, apiPath = ""] = methodArn.split(/:(?=[^:]*$)/);
  const [apiId, stage] = apiPath.split("/");
  return `${prefix}:${apiId}/${stage}/*`;
}
