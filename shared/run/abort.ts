import { getRun, isInFlight, markAbortedBeforeStart, requestAbort, TERMINAL_STATUSES, type RunStatus } from "../aws/runs";
import type { RunExecutions } from "../aws/executions";
import { wakePausedRun } from "../aws/paused-runs";
import { lifecycleEvent, openRunEvents } from "../events/run-events";
import { pumpLane } from "../lanes/pump";
import { ApiError } from "../protocol/errors";
import type { RunDeps } from "./deps";
import { replyToRequester } from "../events/final-response";
import { answerUnstartedChannelRun } from "../channels/unstarted-reply";

export interface AbortOutcome {
  runId: string;
  /** True when this call stopped the run or asked it to stop. */
  aborted: boolean;
  /** `aborted` (ended here, it had not started), `aborting` (the running attempt stops within about a second), or the status it already had. */
  status: RunStatus | "aborting";
}

export type AbortDeps = Pick<RunDeps, "db" | "pusher" | "config" | "log" | "hooks"> & { executions: RunExecutions };

const NOT_STARTED_ERROR = "The run was aborted before it started.";

/**
 * Stops a run, whatever its state:
 * - ended: nothing to do;
 * - running: set the abort flag; the attempt's run watch aborts the model
 *   call and tools, and the state machine finalizes the run `aborted`;
 * - paused (approval, client tool): set the flag and wake the waiting task;
 * - accepted or queued: end it here (one conditional write, so a run that
 *   starts at the same moment is stopped by the flag instead), announce
 *   `lifecycle error`, answer its requester (and its chat), and pump its session lane so the
 *   next run starts. A later dispatch or start of it sees a terminal run and
 *   does nothing.
 */
export async function abortRun(deps: AbortDeps, runId: string, reason = "abort requested"): Promise<AbortOutcome> {
  const run = await getRun(deps.db, runId);
  if (!run) throw new ApiError("NOT_FOUND", `run ${runId} not found`);
  if (TERMINAL_STATUSES.has(run.status)) return { runId, aborted: false, status: run.status };
  const flagged = await requestAbort(deps.db, runId, reason);
  if (isInFlight(run.status) || !(await markAbortedBeforeStart(deps.db, runId, NOT_STARTED_ERROR))) {
    await wakePausedRun(deps.db, deps.executions, runId);
    const now = await getRun(deps.db, runId);
    if (now && TERMINAL_STATUSES.has(now.status)) return { runId, aborted: false, status: now.status };
    return { runId, aborted: flagged, status: "aborting" };
  }
  const emitter = await openRunEvents(deps, runId, run.sessionKey);
  emitter.emit("lifecycle", lifecycleEvent.error({ endedAt: deps.db.now(), error: NOT_STARTED_ERROR, status: "aborted" }));
  await emitter.flush();
  await replyToRequester(deps, runId);
  // A channel message gets its notice in its chat, once (the delivery ledger).
  await answerUnstartedChannelRun(deps, runId);
  await pumpLane(deps, run.sessionKey);
  return { runId, aborted: true, status: "aborted" };
}
