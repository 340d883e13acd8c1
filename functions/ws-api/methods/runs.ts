import { z } from "zod";
import { readEvents } from "../../../shared/aws/event-log";
import { getLane } from "../../../shared/aws/lanes";
import { subscribe } from "../../../shared/aws/connections";
import { getRun, TERMINAL_STATUSES } from "../../../shared/aws/runs";
import { deliverFrame } from "../../../shared/events/delivery";
import { framesForEvent } from "../../../shared/events/frames";
import { validate } from "../../../shared/http/rest";
import { SessionKeySchema } from "../../../shared/protocol/agent-request";
import { ApiError } from "../../../shared/protocol/errors";
import { abortRun } from "../../../shared/run/abort";
import { owns, requireOwnedRun, requireOwnedSession } from "../../../shared/tenancy/guard";
import type { Method } from "./types";

/** Events re-sent per `events.replay` call; `hasMore` asks the client to call again. */
export const REPLAY_PAGE = 500;

const ReplayParamsSchema = z
  .object({
    runId: z.string().min(1),
    afterSeq: z.number().int().min(0).optional(),
    /** The REST event log's name for the same cursor. */
    after: z.number().int().min(0).optional(),
    limit: z.number().int().min(1).max(REPLAY_PAGE).optional(),
  })
  .strict()
  .transform(({ after, afterSeq, ...rest }) => ({ ...rest, afterSeq: afterSeq ?? after ?? 0 }));

/**
 * Subscribes this connection to the run's live events (until the run ends;
 * a run already over needs none), then re-sends the run's logged events after
 * `afterSeq` as the very frames a live subscriber got (agent + chat, chunked
 * when large), in order, and answers with where the replay stopped. The
 * subscription is in place before the log is read, so every event is either
 * in the replayed page or fanned out live: no gap, and no second replay
 * needed (docs/protocol.md, "Resuming a stream").
 */
export const eventsReplayMethod: Method = async (deps, { connectionId, params, caller }) => {
  const { runId, afterSeq, limit = REPLAY_PAGE } = validate(ReplayParamsSchema, params);
  const run = await getRun(deps.db, runId);
  if (!run || (caller && !owns(caller, run))) throw new ApiError("NOT_FOUND", `run ${runId} not found`);
  const live = !TERMINAL_STATUSES.has(run.status);
  if (live) await subscribe(deps.db, connectionId, run.sessionKey, { runId });
  const events = await readEvents(deps.db, runId, afterSeq, limit + 1);
  const page = events.slice(0, limit);
  for (const event of page) {
    for (const frame of framesForEvent(event)) {
      if ((await deliverFrame(deps.pusher, connectionId, frame)) === "gone") return { runId, afterSeq, count: 0 };
    }
  }
  const lastSeq = page.length > 0 ? page[page.length - 1]!.seq : afterSeq;
  return { runId, afterSeq, lastSeq, count: page.length, hasMore: events.length > limit, runStatus: run.status, subscribed: live };
};

const AbortParamsSchema = z.object({ runId: z.string().min(1), reason: z.string().max(500).optional() }).strict();

export const runsAbortMethod: Method = async (deps, { params, caller }) => {
  const { runId, reason } = validate(AbortParamsSchema, params);
  if (caller) await requireOwnedRun(deps.db, caller, runId);
  return abortRun(deps, runId, reason ?? "runs.abort");
};

const ChatAbortParamsSchema = z.object({ sessionKey: SessionKeySchema, runId: z.string().min(1).optional(), agentId: z.string().optional() }).strict();

/**
 * OpenClaw's `chat.abort` (sent by its CLI on SIGINT/SIGTERM): the named run
 * of the session, or without `runId` the session's running run.
 */
export const chatAbortMethod: Method = async (deps, { params, caller }) => {
  const { sessionKey, runId } = validate(ChatAbortParamsSchema, params);
  if (caller) await requireOwnedSession(deps.db, caller, sessionKey);
  const target = runId ?? (await getLane(deps.db, sessionKey)).activeRunId;
  if (!target) return { aborted: false, runIds: [] };
  const run = await getRun(deps.db, target);
  if (!run || run.sessionKey !== sessionKey || (caller && !owns(caller, run))) throw new ApiError("NOT_FOUND", `run ${target} not found in session ${sessionKey}`);
  const outcome = await abortRun(deps, target, "chat.abort");
  return { aborted: outcome.aborted, runIds: outcome.aborted ? [target] : [], status: outcome.status };
};
