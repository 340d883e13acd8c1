import type { Context } from "aws-lambda";
import middy from "@middy/core";
import { validate } from "../../shared/http/rest";
import { startRun } from "../../shared/run/start-run";
import { StartInputSchema, type LoopPointer } from "../../shared/run/pointer";
import type { AppDeps } from "../../shared/runtime/app-deps";

/** State machine task `StartRun`: `{runId}` (or `{runId, loop}` when a run continues as new) -> `{runId, loop}`. */
export function createRunStartHandler(deps: AppDeps) {
  return middy<unknown, LoopPointer, Error, Context>().handler(async (event) => {
    const { runId, loop } = validate(StartInputSchema, event);
    return startRun(deps, runId, loop);
  });
}
