/**
 * What a restart with the same data folder does before anything else: the
 * local stand-ins for what AWS keeps durably come back. Step Functions
 * executions that were running go on from the journal (a Task that was
 * running is invoked again: a retry), and one sweep runs at once — it is the
 * SQS rebuild: every accepted message is on its session's lane record, so
 * pumping the lanes starts whatever the lost queue messages would have
 * started, in acceptance order (nothing waits for the schedule's first tick).
 */
import type { Log } from "../../shared/run/deps";
import type { Wiring } from "./deploy/wiring";
import type { LocalStepFunctions } from "./step-functions";

export interface Recovery {
  /** Executions resumed from the journal (their names). */
  resumed: string[];
  /** Settles when the start-up sweep has run. */
  swept: Promise<unknown>;
}

export function recoverAfterRestart(sfn: LocalStepFunctions, wiring: Wiring, log: Log): Recovery {
  const resumed = sfn.resumeJournaled();
  if (resumed.length > 0) log.info("resumed executions that were running when the stack stopped", { count: resumed.length });
  const swept = wiring.sweepNow().catch((error: unknown) => log.error("start-up sweep failed", { error: String(error) }));
  return { resumed, swept };
}
