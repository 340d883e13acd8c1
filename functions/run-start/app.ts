import type { Context } from "aws-lambda";
import middy from "@middy/core";
import { validate } from "../../shared/http/rest";
import { startRun, type StartPointer } from "../../shared/run/start-run";
import { StartInputSchema } from "../../shared/run/pointer";
import type { AppDeps } from "../../shared/runtime/app-deps";

/** State machine task `StartRun`: `{runId}` (or `{runId, loop}` when a run continues as new) -> `{runId, loop}` (with a finalize `decision` when a hook ended the run before its first attempt). */
export function createRunStartHandler(deps: AppDeps) {
  return middy<unknown, StartPointer, Error, Context>().handler(async (event) => {
    const { runId, loop } = validate(StartInputSchema, event);
    return startRun(deps, runId, loop);
  });
}
