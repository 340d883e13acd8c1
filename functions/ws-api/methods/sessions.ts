import * as z from "zod";
import { subscribe, unsubscribe } from "../../../shared/aws/connections";
import { getSession, listSessions } from "../../../shared/aws/sessions";
import { readTranscript } from "../../../shared/aws/transcript";
import { validate } from "../../../shared/http/rest";
import { SessionKeySchema } from "../../../shared/protocol/agent-request";
import { ApiError } from "../../../shared/protocol/errors";
import { ownedSessionOrNone, owns } from "../../../shared/tenancy/guard";
import { DEFAULT_AGENT_ID } from "../../../shared/protocol/limits";
import { sessionDefaults, sessionRow } from "./session-rows";
import type { Method } from "./types";

export const SessionParamsSchema = z.lazy(() => z.object({ sessionKey: SessionKeySchema }).strict());

/** `sessions.subscribe` also takes OpenClaw's `{}` (its TUI's session-list subscription). */
export const SubscribeParamsSchema = z.lazy(() => z.object({ sessionKey: SessionKeySchema.optional() }).strict());

/**
 * Live events of every run of the session, to this connection (until
 * unsubscribe or disconnect). Without a key (OpenClaw's TUI at startup) it
 * is OpenClaw's session-list subscription: we push no `sessions.changed`
 * events, so it only answers; `chat.send` subscribes to its own session.
 */
export const sessionsSubscribeMethod: Method = async (deps, { connectionId, connection, params, caller }) => {
  const { sessionKey } = validate(SubscribeParamsSchema, params ?? {});
  if (!sessionKey) return { subscribed: true, sessionsChanged: false };
  // A session not created yet may be subscribed to (its first run streams here); another tenant's may not.
  if (caller) await ownedSessionOrNone(deps.db, caller, sessionKey);
  await subscribe(deps.db, connectionId, sessionKey, { surface: connection?.surface });
  return { sessionKey, subscribed: true };
};

export const sessionsUnsubscribeMethod: Method = async (deps, { connectionId, params }) => {
  const { sessionKey } = validate(SessionParamsSchema, params);
  await unsubscribe(deps.db, connectionId, sessionKey);
  return { sessionKey, subscribed: false };
};

/**
 * Our `limit`, plus OpenClaw's `sessions.list` filters (2026.9.6
 * `SessionsListParamsSchema`, typed where we read them): `agentId` must be
 * ours; the other filters (activeMinutes, includeGlobal, search, ...) are
 * accepted and do not narrow this one-agent listing.
 */
export const ListParamsSchema = z.lazy(() => z
  .object({
    limit: z.number().int().min(1).max(500).optional(),
    offset: z.number().int().min(0).optional(),
    agentId: z.literal(DEFAULT_AGENT_ID).optional(),
  })
  .catchall(z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(z.string())])));

/** Sessions, most recently active first (from the session index). */
export const sessionsListMethod: Method = async (deps, { params, caller }) => {
  const { limit = 50, offset = 0 } = validate(ListParamsSchema, params ?? {});
  const sessions = (await listSessions(deps.db, 1000)).filter((s) => !caller || owns(caller, s)).slice(offset, offset + limit);
  return {
    count: sessions.length,
    defaults: sessionDefaults(deps.config.model),
    // OpenClaw's row fields (model, agentId, kind) next to ours; activity is not read per row.
    sessions: sessions.map((s) => sessionRow(s, deps.config.model)),
  };
};

export const HistoryParamsSchema = z.lazy(() => z.object({ sessionKey: SessionKeySchema, limit: z.number().int().min(1).max(1000).optional() }).strict());

/** The committed transcript (the last `limit` entries, default 200). Large answers arrive as `chunk` events. */
export const sessionsHistoryMethod: Method = async (deps, { params, caller }) => {
  const { sessionKey, limit = 200 } = validate(HistoryParamsSchema, params);
  const session = await getSession(deps.db, sessionKey);
  if (!session || (caller && !owns(caller, session))) throw new ApiError("NOT_FOUND", `session ${sessionKey} not found`);
  const entries = await readTranscript(deps.db, session.sessionId);
  const kept = entries.slice(-limit);
  return {
    sessionKey,
    sessionId: session.sessionId,
    ...(kept.length < entries.length ? { truncated: true, total: entries.length } : {}),
    messages: kept.map((e) => ({ seq: e.seq, runId: e.runId, ts: e.ts, ...e.message })),
  };
};
