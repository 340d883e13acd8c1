import { recordExecution, type RunRecord } from "../aws/runs";
import { continuationName, executionNameOfArn, handOffName, redriveGeneration } from "../core/execution-names";
import type { RunDeps } from "./deps";
import type { StepPointer } from "./pointer";

/**
 * The run machine's tasks hand a run that is not finished to the loop machine
 * (infra/state-machine.ts): a clean run never pays for a Choice and a Succeed
 * state, and every other run goes on exactly as it would have past Route.
 */

/** What a run machine task answers once the loop machine has the run; the execution ends on it. */
export type HandedOff = StepPointer & { handedOff: string };

/** A run machine task that found the run driven by another execution: it did nothing. */
export interface OwnedElsewhere {
  runId: string;
  handedOff: string;
}

/**
 * Starts the loop machine at Route with the step's decision, then names the
 * new execution on the run record. In that order: the run machine's execution
 * runs until this task returns, so whoever looks for the run's current
 * execution (the sweeper) finds a running one all along, never a name that
 * does not exist yet. Idempotent: the name is fixed, so a repeated hand-off
 * (a task that died between the two, a retried task) starts nothing new.
 */
export async function handOff(deps: RunDeps, entry: string, step: StepPointer): Promise<HandedOff> {
  // Continue-as-new already started the run's next execution from the loop head.
  if (step.decision.action === "continue_as_new") return { ...step, handedOff: continuationName(step.runId, step.loop.execution) };
  const { continueRun, executionArn } = deps.executions;
  if (!continueRun || !executionArn) throw new Error("the hand-off needs STATE_MACHINE_ARN and LOOP_STATE_MACHINE_ARN in this function");
  const name = handOffName(entry);
  await continueRun(name, { runId: step.runId, loop: step.loop, decision: step.decision });
  await recordExecution(deps.db, step.runId, executionArn(name));
  return { ...step, handedOff: name };
}

/** The name of the execution the run record says drives the run (undefined before the run started). */
export function currentExecutionName(run: Pick<RunRecord, "executionArn">): string | undefined {
  return run.executionArn === undefined ? undefined : executionNameOfArn(run.executionArn);
}

/**
 * A newer re-drive drives the run (its execution, or its own hand-off): a
 * late task of the execution it superseded must not run an attempt beside
 * it. An older name on the record is not an owner: a re-drive's first task
 * may read the record before the sweeper names the re-drive there.
 */
export function supersededBy(run: Pick<RunRecord, "executionArn">, entry: string): string | undefined {
  const current = currentExecutionName(run);
  return current !== undefined && redriveGeneration(current) > redriveGeneration(entry) ? current : undefined;
}

/**
 * This run machine execution already handed the run on: the task is Step
 * Functions' retry of one that did (the record names the hand-off only once
 * it started, so there is nothing left to start).
 */
export function handedOffAlready(run: Pick<RunRecord, "executionArn">, entry: string): boolean {
  return currentExecutionName(run) === handOffName(entry);
}
