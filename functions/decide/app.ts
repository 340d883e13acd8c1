import type { Context } from "aws-lambda";
import middy from "@middy/core";
import { validate } from "../../shared/http/rest";
import { isRetryableCrash, recoverFromCrash } from "../../shared/run/recover";
import { startRun } from "../../shared/run/start-run";
import { RecoverInputSchema, type RecoverInput, type StepPointer } from "../../shared/run/pointer";
import { handOff, supersededBy, type HandedOff, type OwnedElsewhere } from "../../shared/run/hand-off";
import { getRun, type RunRecord } from "../../shared/aws/runs";
import { pauseForInput, PauseInputSchema } from "../../shared/run/pause-for-input";
import type { AppDeps } from "../../shared/runtime/app-deps";

/**
 * State machine tasks `RecoverAttempt`: `{runId, loop?, crash, entry?}` -> `{runId, loop, decision}`
 * (in the run machine, `entry`: handed to the loop machine, shared/run/hand-off.ts);
 * and `PauseForInput`: `{action: "pause_for_input", runId, inputId, taskToken}` (its result is
 * ignored: the task waits for its token).
 */
export function createDecideHandler(deps: AppDeps) {
  const recover = recoverer(deps);
  return middy<unknown, StepPointer | HandedOff | OwnedElsewhere | { paused: string }, Error, Context>().handler(async (event) => {
    if (isPause(event)) {
      const input = validate(PauseInputSchema, event);
      return { paused: await pauseForInput(deps, input) };
    }
    const input = validate(RecoverInputSchema, stripDecision(event));
    if (!input.entry) return recover(input);
    // A run machine's recovery hands its decision to the loop machine, unless a newer re-drive drives the
    // run. (If the crashed Attempt had handed off already, the hand-off starts nothing new.)
    const run = await getRun(deps.db, input.runId);
    const owner = run ? supersededBy(run, input.entry) : undefined;
    if (owner) return { runId: input.runId, handedOff: owner };
    return handOff(deps, input.entry, await recover(input, run));
  });
}

/** `read`: the run record this invocation has just read, so a start again does not read it twice. */
function recoverer(deps: AppDeps): (input: RecoverInput, read?: RunRecord) => Promise<StepPointer> {
  return async (input, read) => {
    if (!input.loop && isRetryableCrash(input.crash.Error)) {
      // The run's first Attempt task died (it starts the run too: shared/run/folded-step.ts) before the
      // state had a loop. The start is idempotent, so this step does it again to get the loop, then
      // decides on the crash like any attempt's; a second failure here is caught and ends the run (FinalizeRun).
      const started = await startRun(deps, input.runId, undefined, read ? { read } : {});
      deps.log.warn("first attempt crashed; run started again", { runId: input.runId, error: input.crash.Error });
      if (started.decision) return { ...started, decision: started.decision };
      return recoverFromCrash({ ...input, loop: started.loop });
    }
    const step = recoverFromCrash(input);
    deps.log.warn("attempt crashed", { runId: input.runId, error: input.crash.Error, decision: step.decision });
    return step;
  };
}

function isPause(event: unknown): boolean {
  return typeof event === "object" && event !== null && (event as { action?: unknown }).action === "pause_for_input";
}

function stripDecision(event: unknown): unknown {
  if (!event || typeof event !== "object") return event;
  const { decision: _decision, ...rest } = event as Record<string, unknown>;
  return rest;
}
