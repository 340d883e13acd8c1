import { GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import { conditionally, isExpired, type Db } from "../aws/dynamo";
import { keys } from "../aws/keys";

/**
 * Durable delivery dedupe (CHIN#<deliveryId>): the platform's redelivery of
 * an update / event / webhook-id answers 200 and starts nothing, long after
 * SQS's 5-minute deduplication window. Kept 7 days (platforms retry for hours).
 */
const SEEN_TTL_SECONDS = 7 * 24 * 3600;

export async function wasSeen(db: Db, deliveryId: string): Promise<string | undefined> {
  const out = await db.doc.send(new GetCommand({ TableName: db.table, Key: keys.channelDelivery(deliveryId), ConsistentRead: true }));
  if (!out.Item || isExpired(out.Item as { expiresAt?: number }, db.now())) return undefined;
  return String(out.Item.runId);
}

/** Written after the run was accepted: a crash in between makes the redelivery accept again, idempotently (same run id). */
export async function markSeen(db: Db, deliveryId: string, runId: string): Promise<void> {
  const now = db.now();
  await conditionally(() =>
    db.doc.send(
      new PutCommand({
        TableName: db.table,
        Item: { ...keys.channelDelivery(deliveryId), v: 1, runId, seenAt: now, expiresAt: Math.floor(now / 1000) + SEEN_TTL_SECONDS },
        ConditionExpression: "attribute_not_exists(pk)",
      }),
    ),
  );
}
