import type { FinalizeDecision } from "../core/run-loop";
import { ATTEMPT_LEASE_MARGIN_MS, attemptStep, YIELD_MARGIN_MS, type StepClock } from "./attempt-step";
import { depsForConfigVersion, type RunDeps } from "./deps";
import { finalizeRun } from "./finalize-run";
import type { FoldedAttemptInput, StepPointer } from "./pointer";
import { startRun } from "./start-run";
import { closeRunEmitter, noteWriterReleased, takeHeldClaim, withInvocationMemo } from "./invocation-memo";
import { releaseWriter } from "../aws/transcript";
import { handOff, type OwnedElsewhere } from "./hand-off";

/**
 * The Attempt task's answer: a step for Route, with `finished` when this task
 * already finalized the run; in the run machine, `handedOff` when the loop
 * machine goes on with it (shared/run/hand-off.ts).
 */
export type FoldedStep = StepPointer & { finished?: { status: string }; handedOff?: string };

/**
 * The Attempt task with the run's first and last steps folded in, so a clean
 * run is one state transition (the run machine's Attempt) instead of five:
 * - no `loop` in the state (the execution's input `{runId}`): the run-start
 *   prelude (shared/run/start-run.ts) runs first, in this invocation;
 * - a `finalize` decision: the run is finalized here (shared/run/finalize-run.ts);
 *   the run machine's execution ends on `finished`, the loop machine's Route
 *   goes straight to Done.
 * - in the run machine (`entry`), any other answer is handed to the loop
 *   machine (shared/run/hand-off.ts).
 * Both halves are idempotent as before. When the inline finalize throws, or
 * too little time is left for it, the step goes out without `finished` and
 * Route sends it to FinalizeRun, whose retries and FinalizeFailed stay the
 * durable path; a crash anywhere is caught into RecoverAttempt as before.
 */
export async function foldedAttemptStep(coldDeps: RunDeps, input: FoldedAttemptInput, clock: StepClock): Promise<FoldedStep | OwnedElsewhere> {
  const deps = withInvocationMemo(coldDeps);
  let done: { runDeps: RunDeps; step: FoldedStep };
  try {
    const started = await startAndAttempt(deps, input, clock);
    // Another execution drives the run: Step Functions retried a task that had handed off (the hand-off
    // names its execution on the run only once it started), or a newer re-drive superseded this one.
    if ("ownedBy" in started) return { runId: input.runId, handedOff: started.ownedBy };
    const { runDeps, step } = started;
    if (step.decision.action !== "finalize" || clock.remainingMs() < YIELD_MARGIN_MS) done = { runDeps, step };
    else done = { runDeps, step: await finalizeInline(runDeps, step as StepPointer & { decision: FinalizeDecision }) };
  } finally {
    await closeRunEmitter(deps, input.runId);
  }
  // In the run machine, whatever is left to do is the loop machine's: once this attempt's events are all
  // written (the emitter closed above), as when Route started the next Attempt.
  return input.entry && !done.step.finished ? handOff(done.runDeps, input.entry, done.step) : done.step;
}

/** The run start (first Attempt only) and the attempt, sharing one transcript claim. */
async function startAndAttempt(deps: RunDeps, input: FoldedAttemptInput, clock: StepClock): Promise<{ runDeps: RunDeps; step: StepPointer } | { ownedBy: string }> {
  try {
    const holdClaimForMs = clock.remainingMs() + ATTEMPT_LEASE_MARGIN_MS;
    const started = input.loop
      ? { runId: input.runId, loop: input.loop, decision: input.decision }
      : await startRun(deps, input.runId, undefined, { holdClaimForMs, ...(input.entry ? { entry: input.entry } : {}) });
    if ("ownedBy" in started && started.ownedBy) return { ownedBy: started.ownedBy };
    const runDeps = await depsForConfigVersion(deps, started.loop.configVersion);
    return { runDeps, step: await attemptStep(runDeps, started, clock) };
  } finally {
    // No attempt took the start's claim (the run ended before one, every profile cooled down): give it up now.
    const left = takeHeldClaim(deps, input.runId);
    if (left) {
      await releaseWriter(deps.db, left.claim);
      noteWriterReleased(deps, input.runId);
    }
  }
}

async function finalizeInline(deps: RunDeps, step: StepPointer & { decision: FinalizeDecision }): Promise<FoldedStep> {
  try {
    const { status } = await finalizeRun(deps, step);
    return { ...step, finished: { status } };
  } catch (error) {
    // FinalizeRun (its own task, with its retries) finishes what this one could not.
    deps.log.warn("inline finalize failed; FinalizeRun takes over", { runId: step.runId, error: error instanceof Error ? error.name : String(error) });
    return step;
  }
}
