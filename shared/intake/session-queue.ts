import { UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { keys } from "../aws/keys";
import type { Db } from "../aws/dynamo";
import type { QueueOverrides } from "../core/queue-settings";

/**
 * Stores (or, when empty, clears) the queue settings of a session: OpenClaw's
 * stored `/queue` session override. Later messages of the session inherit
 * them field by field unless their request says otherwise.
 */
export async function saveSessionQueue(db: Db, sessionKey: string, settings: QueueOverrides): Promise<void> {
  const empty = Object.values(settings).every((value) => value === undefined);
  await db.doc.send(
    new UpdateCommand({
      TableName: db.table,
      Key: keys.session(sessionKey),
      UpdateExpression: empty ? "REMOVE queue" : "SET queue = :queue",
      ConditionExpression: "attribute_exists(pk)",
      ...(empty ? {} : { ExpressionAttributeValues: { ":queue": settings } }),
    }),
  );
}
