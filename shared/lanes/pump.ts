import { addWaiter, claimLane, getLane, listWaiters, releaseLane, removeWaiter } from "../aws/lanes";
import { getRun, markQueued, recordExecution, TERMINAL_STATUSES, type RunRecord } from "../aws/runs";
import type { Db } from "../aws/dynamo";
import type { RunExecutions } from "../aws/executions";

export interface LaneDeps {
  db: Db;
  executions: RunExecutions;
}

export type AdmitOutcome = "started" | "queued" | "duplicate";

/**
 * The dispatcher's admission: the run joins its session lane's waiting list
 * (in acceptance order) and the lane is pumped. Safe to repeat for the same
 * run (SQS redelivery, a crash between any two writes): every step is
 * idempotent and the pump always re-derives what to do from the records.
 */
export async function admitRun(deps: LaneDeps, run: RunRecord): Promise<AdmitOutcome> {
  if (TERMINAL_STATUSES.has(run.status) || run.status === "running") return "duplicate";
  await addWaiter(deps.db, run.sessionKey, { runId: run.runId, acceptedAt: run.acceptedAt });
  await pumpLane(deps, run.sessionKey);
  const lane = await getLane(deps.db, run.sessionKey);
  if (lane.activeRunId === run.runId) return "started";
  await markQueued(deps.db, run.runId);
  return "queued";
}

/**
 * Makes the lane consistent: a lane whose run ended is freed, a lane owned by a
 * run that never got its execution started gets it started, and a free lane is
 * handed to the oldest waiting run. Called after admission, after every run
 * ends, and by the sweeper.
 */
export async function pumpLane(deps: LaneDeps, sessionKey: string): Promise<void> {
  for (let guard = 0; guard < 100; guard += 1) {
    const lane = await getLane(deps.db, sessionKey);
    if (lane.activeRunId) {
      const active = await getRun(deps.db, lane.activeRunId);
      if (active && !TERMINAL_STATUSES.has(active.status)) {
        if (active.status !== "running") await ensureStarted(deps, active);
        return;
      }
      await releaseLane(deps.db, sessionKey, lane.activeRunId);
      continue;
    }
    const [next] = await listWaiters(deps.db, sessionKey, 1);
    if (!next) return;
    const run = await getRun(deps.db, next.runId);
    if (!run || TERMINAL_STATUSES.has(run.status)) {
      await removeWaiter(deps.db, sessionKey, next);
      continue;
    }
    if (await claimLane(deps.db, sessionKey, run.runId)) {
      await ensureStarted(deps, run);
      await removeWaiter(deps.db, sessionKey, next);
      return;
    }
  }
}

async function ensureStarted(deps: LaneDeps, run: RunRecord): Promise<void> {
  const started = await deps.executions.start(run.runId);
  if (started.executionArn) await recordExecution(deps.db, run.runId, started.executionArn);
}
