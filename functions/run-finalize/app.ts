import type { Context } from "aws-lambda";
import middy from "@middy/core";
import { validate } from "../../shared/http/rest";
import { finalizeRun } from "../../shared/run/finalize-run";
import { FinalizeInputSchema } from "../../shared/run/pointer";
import type { AppDeps } from "../../shared/runtime/app-deps";
import { depsForConfigVersion } from "../../shared/run/deps";

/** State machine task `FinalizeRun`: `{runId, loop, decision}` -> `{runId, status}`. */
export function createRunFinalizeHandler(deps: AppDeps) {
  return middy<unknown, { runId: string; status: string }, Error, Context>().handler(async (event) => {
    const input = validate(FinalizeInputSchema, event);
    return finalizeRun(await depsForConfigVersion(deps, input.loop?.configVersion), input);
  });
}
