import * as z from "zod";
import { getLane } from "../../../shared/aws/lanes";
import { getSession } from "../../../shared/aws/sessions";
import { readTranscript } from "../../../shared/aws/transcript";
import { validate } from "../../../shared/http/rest";
import { readAdmission } from "../../../shared/intake/intake";
import { acceptSubscribed } from "./subscribed-intake";
import { sessionBusy } from "../../../shared/intake/answer";
import { IdempotencyKeySchema, MessageTextSchema } from "../../../shared/protocol/agent-request";
import { ApiError } from "../../../shared/protocol/errors";
import { DEFAULT_AGENT_ID } from "../../../shared/protocol/limits";
import { toAgentRequest } from "../../../shared/protocol/ws-agent";
import { ownedOrNone, owns } from "../../../shared/tenancy/guard";
import { chatSessionKey } from "./chat-session-key";
import { sessionDefaults, sessionRow } from "./session-rows";
import type { Method } from "./types";

const Ignored = z.lazy(() => z.unknown().optional());

/**
 * OpenClaw's `chat.send` params (2026.9.6 `ChatSendParamsSchema`, closed).
 * Used: sessionKey, agentId, message, thinking, timeoutMs, idempotencyKey.
 * The rest is accepted and has no effect here (no outbound channels,
 * attachments or per-send routing contracts); docs/protocol.md lists them.
 */
export const ChatSendParamsSchema = z.lazy(() => z
  .object({
    sessionKey: z.string().min(1).max(128),
    agentId: z.string().min(1).optional(),
    sessionId: z.string().min(1).optional(),
    message: MessageTextSchema,
    thinking: z.string().min(1).max(32).optional(),
    timeoutMs: z.number().int().min(0).optional(),
    deliver: z.boolean().optional(),
    idempotencyKey: IdempotencyKeySchema,
    queueMode: z.enum(["steer", "followup", "collect", "interrupt"]).optional(),
    mentions: Ignored,
    workContext: Ignored,
    intent: Ignored,
    fastMode: Ignored,
    fastAutoOnSeconds: Ignored,
    originatingChannel: Ignored,
    originatingTo: Ignored,
    originatingAccountId: Ignored,
    originatingThreadId: Ignored,
    replyToId: Ignored,
    attachments: z.array(z.unknown()).max(0, "attachments are not supported").optional(),
    toolBindings: Ignored,
    systemInputProvenance: Ignored,
    systemProvenanceReceipt: Ignored,
    suppressCommandInterpretation: Ignored,
    expectedLeafEntryId: Ignored,
    expectedSessionRoutingContract: Ignored,
    expectedPermissionMode: Ignored,
    expectedToolOverrides: Ignored,
  })
  .strict());

/**
 * Non-blocking: answers `{runId, status:"started"}` at once; the reply
 * arrives only as `chat` (and `agent`) events of the session, to which this
 * connection is subscribed before the run joins its lane. No final `res`
 * follows (unlike `agent`).
 */
export const chatSendMethod: Method = async (deps, { connectionId, connection, params, caller }) => {
  const parsed = validate(ChatSendParamsSchema, params);
  const sessionKey = chatSessionKey(parsed.sessionKey, parsed.agentId);
  const request = toAgentRequest({
    sessionKey,
    message: parsed.message,
    idempotencyKey: parsed.idempotencyKey,
    ...(parsed.thinking ? { thinking: parsed.thinking } : {}),
    ...(parsed.timeoutMs ? { timeout: parsed.timeoutMs / 1000 } : {}),
    ...(parsed.queueMode ? { queue: { mode: parsed.queueMode } } : {}),
  });
  // The tenant check before the subscription, on the intake's own reads (made here, handed on).
  const admission = await readAdmission(deps, request, caller);
  if (caller) ownedOrNone(caller, admission.read.session, sessionKey);
  const accepted = await acceptSubscribed(deps, { connectionId, connection }, request, { caller, admission });
  if (accepted.status === "rejected") throw sessionBusy(accepted);
  return { runId: accepted.runId, status: accepted.duplicate ? "in_flight" : "started", sessionKey, intake: accepted.status, acceptedAt: accepted.acceptedAt };
};

export const ChatHistoryParamsSchema = z.lazy(() => z
  .object({
    sessionKey: z.string().min(1).max(128),
    agentId: z.string().min(1).optional(),
    sessionId: z.string().min(1).optional(),
    limit: z.number().int().min(1).max(1000).optional(),
    maxChars: z.number().int().min(1).max(500_000).optional(),
    cursor: Ignored,
    maxBytes: Ignored,
    offset: Ignored,
    pendingBefore: Ignored,
    inputRunIds: Ignored,
    messageId: Ignored,
  })
  .strict());

/**
 * OpenClaw's `chat.history`: the session's committed messages (the last
 * `limit`, default 200), its row as `sessionInfo`, the defaults, and the
 * running run as `inFlightRun`. A session with no messages yet answers an
 * empty page (the TUI opens on `main` before anything was sent).
 */
export const chatHistoryMethod: Method = async (deps, { params, caller }) => {
  const parsed = validate(ChatHistoryParamsSchema, params);
  const sessionKey = chatSessionKey(parsed.sessionKey, parsed.agentId);
  const session = await getSession(deps.db, sessionKey);
  if (session && caller && !owns(caller, session)) throw new ApiError("NOT_FOUND", `session ${sessionKey} not found`);
  const defaults = sessionDefaults(deps.config.model);
  if (!session) return { sessionKey, agentId: DEFAULT_AGENT_ID, messages: [], defaults };
  const entries = await readTranscript(deps.db, session.sessionId);
  const kept = entries.slice(-(parsed.limit ?? 200));
  const lane = await getLane(deps.db, sessionKey);
  return {
    sessionKey,
    agentId: DEFAULT_AGENT_ID,
    sessionId: session.sessionId,
    sessionInfo: sessionRow(session, deps.config.model, lane),
    defaults,
    messages: kept.map((e) => ({ ...e.message, __openclaw: { id: `${e.runId}:${e.seq}`, seq: e.seq } })),
    ...(kept.length < entries.length ? { truncated: true, total: entries.length } : {}),
    ...(lane.activeRunId ? { inFlightRun: { runId: lane.activeRunId } } : {}),
  };
};
