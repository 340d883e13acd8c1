import { recordExecution, type RunRecord } from "../aws/runs";
import { HAND_OFF_SUFFIX } from "../aws/executions";
import type { RunDeps } from "./deps";
import type { StepPointer } from "./pointer";

/**
 * The run machine's tasks hand a run that is not finished to the loop machine
 * (infra/state-machine.ts): a clean run never pays for a Choice and a Succeed
 * state, and every other run goes on exactly as it would have past Route.
 */

/** What a run machine task answers once the loop machine has the run; the execution ends on it. */
export type HandedOff = StepPointer & { handedOff: string };

/** The loop machine's execution for a run machine execution (`<runId>` or a re-drive's `<runId>-r<n>`). */
export function handOffName(entry: string): string {
  return `${entry}${HAND_OFF_SUFFIX}`;
}

/**
 * Starts the loop machine at Route with the step's decision. The run record
 * names the new execution before it starts: whoever looks for the run's
 * current execution (the sweeper, a retried task of this execution) finds the
 * loop's from then on, never a finished run machine execution that looks dead.
 * Idempotent: the name is fixed, so a repeated hand-off starts nothing new.
 */
export async function handOff(deps: RunDeps, entry: string, step: StepPointer): Promise<HandedOff> {
  const name = handOffName(entry);
  // Continue-as-new already started the run's next execution from the loop head.
  if (step.decision.action === "continue_as_new") return { ...step, handedOff: `${step.runId}-c${step.loop.execution.generation}` };
  const { continueRun, executionArn } = deps.executions;
  if (!continueRun || !executionArn) throw new Error("the hand-off needs STATE_MACHINE_ARN and LOOP_STATE_MACHINE_ARN in this function");
  await recordExecution(deps.db, step.runId, executionArn(name));
  await continueRun(name, { runId: step.runId, loop: step.loop, decision: step.decision });
  return { ...step, handedOff: name };
}

/**
 * A run machine task that finds the run already handed on (its record names
 * another execution: this task is Step Functions' retry of one that handed
 * off, or a re-drive superseded it) must not run an attempt beside the one
 * that owns the run now.
 */
export function ownedElsewhere(run: Pick<RunRecord, "executionArn">, entry: string): string | undefined {
  const current = run.executionArn?.slice(run.executionArn.lastIndexOf(":") + 1);
  return current !== undefined && current !== entry ? current : undefined;
}
