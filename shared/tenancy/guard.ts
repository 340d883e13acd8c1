/**
 * Tenant isolation and scopes, checked at the edge (REST routes and
 * WebSocket methods) before anything is read for or written by a caller.
 * Another tenant's session or run answers exactly like one that does not
 * exist (404), so ids cannot be probed across tenants.
 */
import { DEFAULT_TENANT, hasScope, type Caller, type Scope } from "../core/access";
import type { Db } from "../aws/dynamo";
import { getRun, type RunRecord } from "../aws/runs";
import { getSession, type SessionRecord } from "../aws/sessions";
import { ApiError } from "../protocol/errors";

/** Records written before tenants existed belong to the default tenant. */
export function ownerOf(record: { tenantId?: string }): string {
  return record.tenantId ?? DEFAULT_TENANT;
}

export function owns(caller: Caller, record: { tenantId?: string }): boolean {
  return ownerOf(record) === caller.tenantId;
}

export function requireScope(caller: Caller, scope: Scope): void {
  if (!hasScope(caller.scopes, scope)) throw new ApiError("FORBIDDEN", `this key lacks the ${scope} scope`, { requiredScope: scope });
}

export async function requireOwnedRun(db: Db, caller: Caller, runId: string): Promise<RunRecord> {
  const run = await getRun(db, runId);
  if (!run || !owns(caller, run)) throw new ApiError("NOT_FOUND", `run ${runId} not found`);
  return run;
}

/** The caller's session; `undefined` when no session has this key (a first message may create it). */
export async function ownedSessionOrNone(db: Db, caller: Caller, sessionKey: string): Promise<SessionRecord | undefined> {
  return ownedOrNone(caller, await getSession(db, sessionKey), sessionKey);
}

/** A session read elsewhere, checked like ownedSessionOrNone: another tenant's session is not found. */
export function ownedOrNone(caller: Caller, session: SessionRecord | undefined, sessionKey: string): SessionRecord | undefined {
  if (session && !owns(caller, session)) throw new ApiError("NOT_FOUND", `session ${sessionKey} not found`);
  return session;
}

export async function requireOwnedSession(db: Db, caller: Caller, sessionKey: string): Promise<SessionRecord> {
  const session = await ownedSessionOrNone(db, caller, sessionKey);
  if (!session) throw new ApiError("NOT_FOUND", `session ${sessionKey} not found`);
  return session;
}

/**
 * An idempotency key names a run within its tenant: the same key from two
 * tenants is two runs. The default tenant keeps the bare key (run ids of
 * existing clients do not move).
 */
export function tenantIdempotencyKey(caller: Caller | undefined, key: string): string {
  return !caller || caller.tenantId === DEFAULT_TENANT ? key : `${caller.tenantId}\u0000${key}`;
}

/** A key with a model allow-list may only ask for those models (and the configured default when it is listed). */
export function requireModelAllowed(caller: Caller | undefined, model: string): void {
  if (!caller?.models || caller.models.includes(model)) return;
  throw new ApiError("FORBIDDEN", `this key may not use model ${model}`, { allowedModels: caller.models });
}
