import type { Context } from "aws-lambda";
import middy from "@middy/core";
import { validate } from "../../shared/http/rest";
import { attemptStep } from "../../shared/run/attempt-step";
import { LoopPointerSchema, type StepPointer } from "../../shared/run/pointer";
import type { AppDeps } from "../../shared/runtime/app-deps";

/** State machine task `Attempt`: `{runId, loop}` -> `{runId, loop, decision}`. */
export function createAttemptHandler(deps: AppDeps) {
  return middy<unknown, StepPointer, Error, Context>().handler(async (event, context) => {
    const input = validate(LoopPointerSchema, stripDecision(event));
    return attemptStep(deps, input, { remainingMs: () => context.getRemainingTimeInMillis() });
  });
}

/** The state carries the previous iteration's decision; the attempt does not need it. */
function stripDecision(event: unknown): unknown {
  if (!event || typeof event !== "object") return event;
  const { decision: _decision, crash: _crash, ...rest } = event as Record<string, unknown>;
  return rest;
}
