import type { Context } from "aws-lambda";
import middy from "@middy/core";
import { validate } from "../../shared/http/rest";
import { foldedAttemptStep, type FoldedStep } from "../../shared/run/folded-step";
import type { OwnedElsewhere } from "../../shared/run/hand-off";
import { FoldedAttemptInputSchema } from "../../shared/run/pointer";
import type { AppDeps } from "../../shared/runtime/app-deps";

/**
 * State machine task `Attempt`: `{runId, loop?, decision?, entry?}` -> `{runId, loop, decision, finished?, handedOff?}`.
 * The first one starts the run and the last one finalizes it; in the run machine (`entry`)
 * an unfinished run is handed to the loop machine (shared/run/folded-step.ts).
 */
export function createAttemptHandler(deps: AppDeps) {
  return middy<unknown, FoldedStep | OwnedElsewhere, Error, Context>().handler(async (event, context) => {
    const input = validate(FoldedAttemptInputSchema, stripCrash(event));
    return foldedAttemptStep(deps, input, { remainingMs: () => context.getRemainingTimeInMillis() });
  });
}

/**
 * The state carries the previous decision: a `compact` or `truncate` runs
 * before the model is called. A caught crash (`crash`) is not the attempt's
 * business; RecoverAttempt already decided on it.
 */
function stripCrash(event: unknown): unknown {
  if (!event || typeof event !== "object") return event;
  const { crash: _crash, ...rest } = event as Record<string, unknown>;
  return rest;
}
