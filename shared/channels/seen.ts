import { PutCommand } from "@aws-sdk/lib-dynamodb";
import { conditionally, type Db } from "../aws/dynamo";
import { keys } from "../aws/keys";

/**
 * Durable delivery dedupe (CHIN#<deliveryId>): the platform's redelivery of
 * an update / event / webhook-id answers 200 and starts nothing, long after
 * SQS's 5-minute deduplication window. Kept 7 days (platforms retry for hours).
 */
const SEEN_TTL_SECONDS = 7 * 24 * 3600;

/**
 * Claims the delivery id for the run its message will have (one conditional
 * write: the webhook's hot path reads nothing first). False when it was
 * claimed before and has not expired: a redelivery. A crash after the claim
 * and before the run was accepted leaves a claim without a run; the caller
 * checks the run and accepts again (idempotently, same run id).
 */
export async function claimDelivery(db: Db, deliveryId: string, runId: string): Promise<boolean> {
  const now = db.now();
  return conditionally(() =>
    db.doc.send(
      new PutCommand({
        TableName: db.table,
        Item: { ...keys.channelDelivery(deliveryId), v: 1, runId, seenAt: now, expiresAt: Math.floor(now / 1000) + SEEN_TTL_SECONDS },
        ConditionExpression: "attribute_not_exists(pk) OR expiresAt <= :nowSeconds",
        ExpressionAttributeValues: { ":nowSeconds": Math.floor(now / 1000) },
      }),
    ),
  );
}
