import type { Db } from "./dynamo";
import type { RunExecutions } from "./executions";
import { pendingInputsOf } from "./external-inputs";

/**
 * A run paused for an approval or a client tool has no code running to see
 * its abort flag: wake its parked task now (the next attempt finds the flag
 * and ends the run `aborted`) instead of at the input's deadline. The answers
 * stay unset. A pause whose token is not parked yet sees the flag itself
 * (shared/run/pause-for-input.ts), so the flag must be set before this runs.
 */
export async function wakePausedRun(db: Db, executions: RunExecutions, runId: string): Promise<void> {
  if (!executions.answerTask) return;
  for (const input of await pendingInputsOf(db, runId)) {
    if (input.taskToken) await executions.answerTask(input.taskToken, { aborted: true });
  }
}
