/**
 * Execution names (pure). A run's first execution is named by its run id; a
 * re-drive `<runId>-r<n>`; a run machine execution's hand-off to the loop
 * machine `<that name>-l`; a continuation `<runId>-c<n>`, or `<runId>-r<m>-c<n>`
 * in re-drive m (infra/state-machine.ts). A re-drive starts its loop afresh, so
 * its continuations count from 1 again: without the re-drive in the name, they
 * would ask for the closed executions of the run's first chain.
 */
const CONTINUED = /-c(\d+)$/;
const REDRIVEN = /-r(\d+)$/;
const HANDED_OFF = /-l$/;

/** An execution's name: the last segment of its ARN ("" for none). */
export function executionNameOfArn(executionArn: string | undefined): string {
  return executionArn?.slice(executionArn.lastIndexOf(":") + 1) ?? "";
}

/** The loop machine execution a run machine execution hands its run to. */
export function handOffName(entry: string): string {
  return `${entry}-l`;
}

/** The continuation `execution.generation` of the run's execution chain in re-drive `execution.redrive` (absent: the first chain). */
export function continuationName(runId: string, execution: { redrive?: number; generation: number }): string {
  return `${runId}${execution.redrive ? `-r${execution.redrive}` : ""}-c${execution.generation}`;
}

/** Which machine an execution of this name runs in: continuations and hand-offs run in the loop machine. */
export function executionMachine(name: string): "run" | "loop" {
  return CONTINUED.test(name) || HANDED_OFF.test(name) ? "loop" : "run";
}

/** The run id an execution belongs to. */
export function runIdOfExecution(name: string): string {
  return name.replace(CONTINUED, "").replace(HANDED_OFF, "").replace(REDRIVEN, "");
}

/** Which re-drive an execution belongs to (0: the run's first execution, its hand-off and continuations). */
export function redriveGeneration(name: string): number {
  return Number(REDRIVEN.exec(name.replace(HANDED_OFF, "").replace(CONTINUED, ""))?.[1] ?? 0);
}

/** The continuation generation of a `<runId>-c<n>` name (0 otherwise). */
export function continuationGeneration(name: string): number {
  return Number(CONTINUED.exec(name)?.[1] ?? 0);
}
