import * as z from "zod";
import { readEvents } from "../../../shared/aws/event-log";
import { getLane } from "../../../shared/aws/lanes";
import { subscribe } from "../../../shared/aws/connections";
import { getRun, TERMINAL_STATUSES } from "../../../shared/aws/runs";
import { deliverFrame } from "../../../shared/events/delivery";
import { framesForEvent } from "../../../shared/events/frames";
import { validate } from "../../../shared/http/rest";
import { RunIdSchema } from "../../../shared/protocol/ids";
import { SessionKeySchema } from "../../../shared/protocol/agent-request";
import { ApiError } from "../../../shared/protocol/errors";
import { abortRun, type AbortDeps } from "../../../shared/run/abort";
import { dedupe } from "../../../shared/core/lanes";
import { owns, requireOwnedRun, requireOwnedSession } from "../../../shared/tenancy/guard";
import { chatSessionKey } from "./chat-session-key";
import type { Method } from "./types";

/** Events re-sent per `events.replay` call; `hasMore` asks the client to call again. */
export const REPLAY_PAGE = 500;

export const ReplayParamsSchema = z.lazy(() => z
  .object({
    runId: RunIdSchema,
    afterSeq: z.number().int().min(0).optional(),
    /** The REST event log's name for the same cursor. */
    after: z.number().int().min(0).optional(),
    limit: z.number().int().min(1).max(REPLAY_PAGE).optional(),
  })
  .strict()
  .transform(({ after, afterSeq, ...rest }) => ({ ...rest, afterSeq: afterSeq ?? after ?? 0 })));

/**
 * Subscribes this connection to the run's live events (until the run ends;
 * a run already over needs none), then re-sends the run's logged events after
 * `afterSeq` as the very frames a live subscriber got (agent + chat, chunked
 * when large), in order, and answers with where the replay stopped. The
 * subscription is in place before the log is read, so every event is either
 * in the replayed page or fanned out live: no gap, and no second replay
 * needed (docs/protocol.md, "Resuming a stream").
 */
export const eventsReplayMethod: Method = async (deps, { connectionId, connection, params, caller }) => {
  const { runId, afterSeq, limit = REPLAY_PAGE } = validate(ReplayParamsSchema, params);
  const run = await getRun(deps.db, runId);
  if (!run || (caller && !owns(caller, run))) throw new ApiError("NOT_FOUND", `run ${runId} not found`);
  const live = !TERMINAL_STATUSES.has(run.status);
  const surface = connection?.surface ?? "both";
  if (live) await subscribe(deps.db, connectionId, run.sessionKey, { runId, surface });
  const events = await readEvents(deps.db, runId, afterSeq, limit + 1);
  const page = events.slice(0, limit);
  for (const event of page) {
    for (const frame of framesForEvent(event, surface)) {
      if ((await deliverFrame(deps.pusher, connectionId, frame)) === "gone") return { runId, afterSeq, count: 0 };
    }
  }
  const lastSeq = page.length > 0 ? page[page.length - 1]!.seq : afterSeq;
  return { runId, afterSeq, lastSeq, count: page.length, hasMore: events.length > limit, runStatus: run.status, subscribed: live };
};

export const AbortParamsSchema = z.lazy(() => z.object({ runId: RunIdSchema, reason: z.string().max(500).optional() }).strict());

export const runsAbortMethod: Method = async (deps, { params, caller }) => {
  const { runId, reason } = validate(AbortParamsSchema, params);
  if (caller) await requireOwnedRun(deps.db, caller, runId);
  return abortRun(deps, runId, reason ?? "runs.abort");
};

/** OpenClaw's `chat.abort` params; `preserveSideRuns` (its TUI) is accepted: we run no side runs. */
export const ChatAbortParamsSchema = z.lazy(() => z
  .object({ sessionKey: SessionKeySchema, runId: RunIdSchema.optional(), agentId: z.string().optional(), preserveSideRuns: z.boolean().optional() })
  .strict());

/**
 * OpenClaw's `chat.abort` (sent by its CLI on SIGINT/SIGTERM): the named run
 * of the session (queued or running); without `runId`, the session's queued
 * turns first (so none starts when the running one stops), then its running run.
 */
export const chatAbortMethod: Method = async (deps, { params, caller }) => {
  const parsed = validate(ChatAbortParamsSchema, params);
  const { runId } = parsed;
  const sessionKey = chatSessionKey(parsed.sessionKey, parsed.agentId);
  if (caller) await requireOwnedSession(deps.db, caller, sessionKey);
  if (runId) {
    const run = await getRun(deps.db, runId);
    if (!run || run.sessionKey !== sessionKey || (caller && !owns(caller, run))) throw new ApiError("NOT_FOUND", `run ${runId} not found in session ${sessionKey}`);
    const outcome = await abortRun(deps, runId, "chat.abort");
    return { aborted: outcome.aborted, runIds: outcome.aborted ? [runId] : [], status: outcome.status };
  }
  const lane = await getLane(deps.db, sessionKey);
  // The session is the caller's (checked above), so are the runs of its lane.
  const targets = [...dedupe(lane.waiting).map((entry) => entry.runId), ...(lane.activeRunId ? [lane.activeRunId] : [])];
  const aborted: string[] = [];
  for (const target of targets) {
    if (await abortIfPresent(deps, target)) aborted.push(target);
  }
  return { aborted: aborted.length > 0, runIds: aborted };
};

/** A lane entry whose record is gone (pruned meanwhile) has nothing left to abort. */
async function abortIfPresent(deps: AbortDeps, runId: string): Promise<boolean> {
  try {
    return (await abortRun(deps, runId, "chat.abort")).aborted;
  } catch (error) {
    if (error instanceof ApiError && error.code === "NOT_FOUND") return false;
    throw error;
  }
}
