import { getRun, recordExecution, requestAbort, TERMINAL_STATUSES, type RunRecord } from "../aws/runs";
import { markRedriven } from "../aws/abort-flag";
import type { ExecutionState, ExecutionStatus } from "../aws/executions";
import { continuationGeneration, continuationName, executionNameOfArn, redriveGeneration, runIdOfExecution } from "../core/execution-names";
import { finalizeRun } from "../run/finalize-run";
import type { RunDeps } from "../ports/run-deps";
import { handOffLane } from "../lanes/handoff";

/**
 * Runs whose Step Functions execution ended without finalizing them: stopped
 * from outside, timed out, failed in FinalizeRun itself. In AWS an
 * EventBridge rule on "Step Functions Execution Status Change" brings the
 * sweeper here within seconds; the every-minute sweep catches anything missed.
 */
export function isClosed(status: ExecutionStatus): boolean {
  return status !== "RUNNING" && status !== "PENDING_REDRIVE";
}

/** How many times the sweeper may re-drive a run whose execution died for an infrastructure reason. */
export const MAX_REDRIVES = 2;

/** The execution died of the service, not of the run: a Step Functions runtime failure, or it is gone. */
export function diedOfInfrastructure(execution: ExecutionState | undefined): boolean {
  return execution === undefined || (execution.status === "FAILED" && execution.error === "States.Runtime");
}

/**
 * A run whose execution died for an infrastructure reason goes on in a fresh
 * execution `<runId>-r<n>` (StartRun is idempotent and the attempt starts on
 * the latest committed transcript: what a Step Functions retry does), at most
 * MAX_REDRIVES times; after that, or when this deployment cannot start
 * executions, it ends at once with a clear error.
 */
export async function redriveOrEnd(deps: RunDeps, run: RunRecord, execution: ExecutionState | undefined, diedName?: string): Promise<"redriven" | "ended"> {
  // The died execution's own name counts too: a re-drive that dies at once can report its end before the
  // run record names it, and a stale generation would "re-drive" into the closed name it already used.
  const generation = Math.max(redriveGeneration(executionNameOfArn(run.executionArn)), redriveGeneration(diedName ?? "")) + 1;
  if (generation <= MAX_REDRIVES && deps.executions.continueRun) {
    // Before the start: an attempt of the dead execution that still runs (the Lambda outlives its
    // execution) sees the newer generation within a second and stops without deciding or finalizing.
    await markRedriven(deps.db, run.runId, generation);
    const started = await deps.executions.continueRun(`${run.runId}-r${generation}`, { runId: run.runId });
    if (started.executionArn) await recordExecution(deps.db, run.runId, started.executionArn);
    deps.log.warn("run re-driven after its execution died", { runId: run.runId, generation, error: execution?.error ?? "ExecutionDoesNotExist" });
    return "redriven";
  }
  await endDeadRun(deps, run, execution ?? { status: "FAILED", error: "ExecutionDoesNotExist", cause: "The run's execution no longer exists." });
  return "ended";
}

/**
 * The run's current execution. A run that continued as new has a SUCCEEDED
 * earlier execution and a newer `-c<n>` one; the newest that exists counts.
 * "unknown" when this deployment cannot describe executions.
 */
export async function currentExecution(deps: RunDeps, run: RunRecord): Promise<ExecutionState | undefined | "unknown"> {
  const describe = deps.executions.describe?.bind(deps.executions);
  if (!describe) return "unknown";
  let state = await describe(run.executionArn ?? run.runId);
  if (state?.status !== "SUCCEEDED") return state;
  const named = executionNameOfArn(run.executionArn);
  const redrive = redriveGeneration(named);
  const from = continuationGeneration(named);
  for (let generation = from + 1; generation <= from + 100; generation += 1) {
    const next = await describe(continuationName(run.runId, { redrive, generation }));
    if (!next) break;
    state = next;
  }
  return state;
}

/** Ends the run with what happened to its execution, then (inside finalizeRun) hands its lanes on. */
export async function endDeadRun(deps: RunDeps, run: RunRecord, execution: ExecutionState): Promise<void> {
  // An attempt Lambda of the dead execution may still be running: the flag stops it within a second.
  await requestAbort(deps.db, run.runId, `the run's execution ended (${execution.status})`);
  const status = execution.status === "TIMED_OUT" ? "timeout" : execution.status === "ABORTED" ? "aborted" : "error";
  const error = `The run's execution ended (${execution.status}${execution.error ? `: ${execution.error}` : ""}) before the run finished.`;
  await finalizeRun(deps, {
    runId: run.runId,
    decision: { action: "finalize", status, reason: "execution_ended", error, ...(execution.cause ? { detail: execution.cause.slice(0, 1000) } : {}) },
  });
}

export interface ExecutionEnded {
  name: string;
  executionArn: string;
  status: ExecutionStatus;
  error?: string;
  cause?: string;
}

/**
 * An execution closed. If it was its run's current execution and the run
 * has not ended, end it now; either way make sure the run's lanes move on.
 */
export async function onExecutionEnded(deps: RunDeps, ended: ExecutionEnded): Promise<"finalized" | "handed_off" | "ignored"> {
  if (!isClosed(ended.status)) return "ignored";
  const run = await getRun(deps.db, runIdOfExecution(ended.name));
  if (!run) return "ignored";
  if (TERMINAL_STATUSES.has(run.status)) {
    await handOffLane(deps, run.runId);
    return "handed_off";
  }
  // A newer execution of the same run (continue-as-new) carries on; this one just handed over.
  const current = run.executionArn ?? ended.executionArn;
  if (current !== ended.executionArn || ended.status === "SUCCEEDED") {
    const state = await currentExecution(deps, run);
    if (state === "unknown" || !state || !isClosed(state.status)) return "ignored";
  }
  const state: ExecutionState = { status: ended.status, ...(ended.error ? { error: ended.error } : {}), ...(ended.cause ? { cause: ended.cause } : {}) };
  if (diedOfInfrastructure(state) && (await redriveOrEnd(deps, run, state, ended.name)) === "redriven") return "ignored";
  await endDeadRun(deps, run, state);
  return "finalized";
}
