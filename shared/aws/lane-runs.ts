import { UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { keys } from "./keys";
import { conditionally, type Db } from "./dynamo";
import { addEndingDetails, type RunRecord } from "./runs";

/**
 * Run-record transitions that only the session lane makes. Each is one
 * conditional write on the message's own record, which is what makes the
 * lane's choices exclusive: a message is either folded into a run
 * (steered / collected) or started as its own run, never both, because both
 * paths require it to still be `accepted` or `queued`.
 */
const NOT_STARTED = "#s IN (:accepted, :queued)";
const NOT_STARTED_VALUES = { ":accepted": "accepted", ":queued": "queued" };

/** Waiting in the lane, not started, not folded, not ended. */
export function isStartable(run: RunRecord): boolean {
  return run.status === "accepted" || run.status === "queued";
}

/** Folds a waiting message into `into`; true also when it already is (a retried step). */
export async function markMerged(db: Db, runId: string, into: string, status: "steered" | "collected"): Promise<boolean> {
  return conditionally(() =>
    db.doc.send(
      new UpdateCommand({
        TableName: db.table,
        Key: keys.run(runId),
        UpdateExpression: "SET #s = :status, mergedInto = :into",
        ConditionExpression: `${NOT_STARTED} OR (#s = :status AND mergedInto = :into)`,
        ExpressionAttributeNames: { "#s": "status" },
        ExpressionAttributeValues: { ...NOT_STARTED_VALUES, ":status": status, ":into": into },
      }),
    ),
  );
}

/** A steered message its run never delivered goes back to waiting (it then runs as a follow-up). */
export async function revertUndeliveredSteer(db: Db, runId: string, from: string): Promise<boolean> {
  return conditionally(() =>
    db.doc.send(
      new UpdateCommand({
        TableName: db.table,
        Key: keys.run(runId),
        UpdateExpression: "SET #s = :queued REMOVE mergedInto",
        ConditionExpression: "#s = :steered AND mergedInto = :from AND attribute_not_exists(userEntrySeq)",
        ExpressionAttributeNames: { "#s": "status" },
        ExpressionAttributeValues: { ":queued": "queued", ":steered": "steered", ":from": from },
      }),
    ),
  );
}

/** The message a run starts with when the lane folded others into it; the caller's own text is kept. */
export async function setStartMessage(db: Db, runId: string, message: string, own: string, batch: string[]): Promise<boolean> {
  return conditionally(() =>
    db.doc.send(
      new UpdateCommand({
        TableName: db.table,
        Key: keys.run(runId),
        UpdateExpression: `SET message = :message, ownMessage = :own${batch.length > 0 ? ", #batch = :batch" : ""}`,
        ConditionExpression: NOT_STARTED,
        // BATCH is a DynamoDB reserved word.
        ExpressionAttributeNames: { "#s": "status", ...(batch.length > 0 ? { "#batch": "batch" } : {}) },
        ExpressionAttributeValues: { ...NOT_STARTED_VALUES, ":message": message, ":own": own, ...(batch.length > 0 ? { ":batch": batch } : {}) },
      }),
    ),
  );
}

/** Remembers which steered messages a run took, so its end settles them (duplicates are ignored on read). */
export async function addSteered(db: Db, runId: string, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await db.doc.send(
    new UpdateCommand({
      TableName: db.table,
      Key: keys.run(runId),
      UpdateExpression: "SET steeredIds = list_append(if_not_exists(steeredIds, :empty), :ids)",
      ConditionExpression: "attribute_exists(pk)",
      ExpressionAttributeValues: { ":empty": [], ":ids": ids },
    }),
  );
}

/** Ends a message that never started (dropped for the cap, refused after a race): `error` with the reason. */
export async function endUnstarted(db: Db, runId: string, error: string): Promise<boolean> {
  return conditionally(() =>
    db.doc.send(
      new UpdateCommand({
        TableName: db.table,
        Key: keys.run(runId),
        UpdateExpression: "SET #s = :error, endedAt = :now, #e = :text",
        ConditionExpression: NOT_STARTED,
        ExpressionAttributeNames: { "#s": "status", "#e": "error" },
        ExpressionAttributeValues: { ...NOT_STARTED_VALUES, ":error": "error", ":now": db.now(), ":text": error },
      }),
    ),
  );
}

/** A folded message ends with the run that carried it (same status and error). */
export async function endMerged(db: Db, runId: string, carrier: RunRecord): Promise<boolean> {
  const names: Record<string, string> = { "#s": "status" };
  const values: Record<string, unknown> = {
    ":status": carrier.status,
    ":at": carrier.endedAt ?? db.now(),
    ":into": carrier.runId,
    ":steered": "steered",
    ":collected": "collected",
  };
  const sets = ["#s = :status", "endedAt = :at", "startedAt = if_not_exists(startedAt, :started)"];
  values[":started"] = carrier.startedAt ?? carrier.endedAt ?? db.now();
  // Its caller's answer is the carrier's reply.
  addEndingDetails(carrier, sets, names, values);
  return conditionally(() =>
    db.doc.send(
      new UpdateCommand({
        TableName: db.table,
        Key: keys.run(runId),
        UpdateExpression: `SET ${sets.join(", ")}`,
        ConditionExpression: "#s IN (:steered, :collected) AND mergedInto = :into",
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      }),
    ),
  );
}
