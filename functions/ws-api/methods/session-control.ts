import * as z from "zod";
import { getLane } from "../../../shared/aws/lanes";
import { getSession, resetSession } from "../../../shared/aws/sessions";
import { newSessionId } from "../../../shared/core/ids";
import { validate } from "../../../shared/http/rest";
import { ApiError } from "../../../shared/protocol/errors";
import { owns, requireOwnedSession } from "../../../shared/tenancy/guard";
import type { Caller } from "../../../shared/core/access";
import type { AppDeps } from "../../../shared/runtime/app-deps";
import { chatSessionKey } from "./chat-session-key";
import { sessionDefaults, sessionRow } from "./session-rows";
import type { Method } from "./types";

const Key = z.lazy(() => z.string().min(1).max(128));

export const SessionsResolveParamsSchema = z.lazy(() => z
  .object({ key: Key.optional(), sessionKey: Key.optional(), sessionId: z.string().min(1).optional(), agentId: z.string().min(1).optional(), allowMissing: z.boolean().optional(), label: z.unknown().optional(), reference: z.unknown().optional() })
  .strict());

/**
 * OpenClaw's `sessions.resolve`: a key (or `sessionId`, as the `agent` method
 * maps it: `agent:main:explicit:<id>`) to its row. Labels, short ids
 * and references are not kept here, so they resolve nothing.
 */
export const sessionsResolveMethod: Method = async (deps, { params, caller }) => {
  const parsed = validate(SessionsResolveParamsSchema, params);
  const raw = parsed.key ?? parsed.sessionKey ?? (parsed.sessionId ? `agent:main:explicit:${parsed.sessionId}` : undefined);
  if (!raw) throw new ApiError("INVALID_REQUEST", "sessions.resolve needs key, sessionKey or sessionId");
  const key = chatSessionKey(raw, parsed.agentId);
  const session = await visibleSession(deps, caller, key);
  if (!session) {
    if (parsed.allowMissing) return { ok: false, key };
    throw new ApiError("NOT_FOUND", `session ${key} not found`);
  }
  return { ok: true, key, entry: await row(deps, session) };
};

export const SessionsDescribeParamsSchema = z.lazy(() => z.object({ key: Key, agentId: z.string().min(1).optional() }).strict());

/** OpenClaw's `sessions.describe`: the row of one exact key, `session: null` when there is none yet. */
export const sessionsDescribeMethod: Method = async (deps, { params, caller }) => {
  const parsed = validate(SessionsDescribeParamsSchema, params);
  const key = chatSessionKey(parsed.key, parsed.agentId);
  const session = await visibleSession(deps, caller, key);
  return { key, session: session ? await row(deps, session) : null, defaults: sessionDefaults(deps.config.model) };
};

export const SessionsResetParamsSchema = z.lazy(() => z
  .object({ key: Key, agentId: z.string().min(1).optional(), reason: z.enum(["new", "reset"]).optional(), expectedSessionId: z.string().min(1).optional() })
  .strict());

/**
 * OpenClaw's `sessions.reset` (`/new`, `/reset`): the key moves to a new,
 * empty transcript; the old one stays stored. Refused with SESSION_BUSY while
 * a run of the session is running or waiting (a reset inside a run goes
 * through the `/new` message instead, in lane order), and with
 * INVALID_REQUEST `session-changed` when `expectedSessionId` is stale.
 */
export const sessionsResetMethod: Method = async (deps, { params, caller }) => {
  const parsed = validate(SessionsResetParamsSchema, params);
  const key = chatSessionKey(parsed.key, parsed.agentId);
  const session = caller ? await requireOwnedSession(deps.db, caller, key) : await getSession(deps.db, key);
  if (!session) throw new ApiError("NOT_FOUND", `session ${key} not found`);
  if (parsed.expectedSessionId && parsed.expectedSessionId !== session.sessionId) {
    throw new ApiError("INVALID_REQUEST", `session ${key} changed since it was read`, { reason: "session-changed", sessionId: session.sessionId });
  }
  const lane = await getLane(deps.db, key);
  if (lane.activeRunId || lane.waiting.length > 0) {
    throw new ApiError("SESSION_BUSY", `session ${key} has a run in progress; abort it or send /new as a message`, { sessionKey: key, reason: "busy", ...(lane.activeRunId ? { activeRunId: lane.activeRunId } : {}) });
  }
  const reset = await resetSession(deps.db, key, session.sessionId, newSessionId());
  return { ok: true, key, entry: sessionRow(reset, deps.config.model, { activeRunId: undefined }) };
};

/** Fields of OpenClaw's `sessions.patch` this backend does not keep per session (each names what to do instead). */
const UNSUPPORTED_PATCH_FIELDS = ["model", "thinkingLevel", "fastMode", "verboseLevel", "traceLevel", "reasoningLevel", "contextWindow", "archived", "label", "category"];

export const SessionsPatchParamsSchema = z.lazy(() => z.looseObject({ key: Key, agentId: z.string().min(1).optional() }));

/**
 * OpenClaw's `sessions.patch`: this backend keeps no per-session overrides
 * (model and thinking are chosen per request: `agent`/`chat.send` params), so
 * a patch that would change something is refused with INVALID_REQUEST naming
 * the fields; an empty patch answers the row (what the TUI reads back).
 */
export const sessionsPatchMethod: Method = async (deps, { params, caller }) => {
  const parsed = validate(SessionsPatchParamsSchema, params);
  const key = chatSessionKey(parsed.key, parsed.agentId);
  const asked = Object.keys(parsed).filter((field) => field !== "key" && field !== "agentId" && parsed[field] !== undefined);
  if (asked.length > 0) {
    const known = asked.filter((field) => UNSUPPORTED_PATCH_FIELDS.includes(field));
    throw new ApiError("INVALID_REQUEST", `sessions.patch: per-session overrides are not supported here (${asked.join(", ")}); pass model/thinking with each chat.send or agent request`, {
      unsupported: asked,
      ...(known.length < asked.length ? { unknown: asked.filter((field) => !known.includes(field)) } : {}),
    });
  }
  const session = await visibleSession(deps, caller, key);
  if (!session) throw new ApiError("NOT_FOUND", `session ${key} not found`);
  const entry = await row(deps, session);
  return { ok: true, key, entry, resolved: { modelProvider: entry.modelProvider, model: entry.model } };
};

async function visibleSession(deps: AppDeps, caller: Caller | undefined, key: string) {
  const session = await getSession(deps.db, key);
  return session && (!caller || owns(caller, session)) ? session : undefined;
}

async function row(deps: AppDeps, session: NonNullable<Awaited<ReturnType<typeof getSession>>>) {
  const lane = await getLane(deps.db, session.sessionKey);
  return sessionRow(session, deps.config.model, lane);
}
