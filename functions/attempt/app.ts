import type { Context } from "aws-lambda";
import middy from "@middy/core";
import { validate } from "../../shared/http/rest";
import { attemptStep } from "../../shared/run/attempt-step";
import { AttemptInputSchema, type StepPointer } from "../../shared/run/pointer";
import type { AppDeps } from "../../shared/runtime/app-deps";
import { depsForConfigVersion } from "../../shared/run/deps";

/** State machine task `Attempt`: `{runId, loop, decision?}` -> `{runId, loop, decision}`. */
export function createAttemptHandler(deps: AppDeps) {
  return middy<unknown, StepPointer, Error, Context>().handler(async (event, context) => {
    const input = validate(AttemptInputSchema, stripCrash(event));
    const runDeps = await depsForConfigVersion(deps, input.loop.configVersion);
    return attemptStep(runDeps, input, { remainingMs: () => context.getRemainingTimeInMillis() });
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
