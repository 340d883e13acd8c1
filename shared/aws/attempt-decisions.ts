import { UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { Decision } from "../core/run-loop";
import type { Db } from "./dynamo";
import { keys } from "./keys";

/** Only an attempt that left a record gets its decision: never a stub item without the rest. */
const ATTEMPT_RECORD_EXISTS = "attribute_exists(pk)";

/**
 * Stamps the outer loop's decision onto the attempt it followed, so the loop
 * path of a run (attempt, failure kind, decision, timings) can be read back
 * in one query (GET /v1/runs/{runId}/trace, the console). Advisory: the
 * decision already travels in Step Functions state; a lost write only leaves
 * a gap in the trace, so it never fails the run.
 */
export async function recordAttemptDecision(db: Db, runId: string, attempt: number, decision: Decision): Promise<boolean> {
  try {
    await db.doc.send(
      new UpdateCommand({
        TableName: db.table,
        Key: keys.attempt(runId, attempt),
        ConditionExpression: ATTEMPT_RECORD_EXISTS,
        UpdateExpression: "SET decision = :decision, decidedAt = :at",
        ExpressionAttributeValues: { ":decision": decision, ":at": db.now() },
      }),
    );
    return true;
  } catch {
    return false;
  }
}
