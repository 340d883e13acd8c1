import type { Context } from "aws-lambda";
import middy from "@middy/core";
import * as z from "zod";
import { onExecutionEnded } from "../../shared/sweeper/dead-runs";
import { sweep, type SweepReport } from "../../shared/sweeper/sweep";
import type { AppDeps } from "../../shared/runtime/app-deps";

/** EventBridge "Step Functions Execution Status Change" (only the fields we use). */
const ExecutionStatusChangeSchema = z.lazy(() => z.looseObject({
  "detail-type": z.literal("Step Functions Execution Status Change"),
  detail: z.looseObject({
    executionArn: z.string(),
    name: z.string(),
    status: z.enum(["RUNNING", "SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED", "PENDING_REDRIVE"]),
    error: z.string().nullish(),
    cause: z.string().nullish(),
  }),
}));

/** What a sweep keeps back of its invocation's time for the work after the lanes. */
const SWEEP_TIME_RESERVE_MS = 20_000;

export type SweeperResult = { kind: "sweep"; report: SweepReport } | { kind: "execution"; runOutcome: string };

/**
 * The sweeper, on two EventBridge triggers: the every-minute schedule (a
 * full sweep of lanes, slots, leases and stuck runs) and a run execution
 * that closed FAILED / TIMED_OUT / ABORTED (that run is ended and its lane
 * handed on within seconds, instead of at the next sweep).
 */
export function createSweeperHandler(deps: AppDeps) {
  return middy<unknown, SweeperResult, Error, Context>().handler(async (event, context) => {
    const change = ExecutionStatusChangeSchema.safeParse(event);
    if (change.success) {
      const { detail } = change.data;
      const runOutcome = await onExecutionEnded(deps, {
        name: detail.name,
        executionArn: detail.executionArn,
        status: detail.status,
        ...(detail.error ? { error: detail.error } : {}),
        ...(detail.cause ? { cause: detail.cause } : {}),
      });
      deps.log.info("execution ended", { executionArn: detail.executionArn, status: detail.status, runOutcome });
      return { kind: "execution", runOutcome };
    }
    // Leave time for the slots, the global lane and the report after the last lane started.
    const report = await sweep(deps, { outOfTime: () => context.getRemainingTimeInMillis() < SWEEP_TIME_RESERVE_MS });
    deps.log.info("sweep done", { ...report, diagnostics: report.diagnostics.length });
    return { kind: "sweep", report };
  });
}
