import { DeleteCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { createHash } from "node:crypto";
import { keys, prefixes } from "./keys";
import { conditionally, type Db } from "./dynamo";
import { queryItems } from "./query-pages";

/**
 * Which session lanes may be busy, so the sweeper can visit them without a
 * Scan. Every message that joins a lane touches its entry (one UpdateItem);
 * the sweeper removes an entry once it finds the lane idle, conditioned on
 * the touch counter it read *before* reading the lane:
 *
 *   join:    append to LANE  ->  touch entry (touches += 1)
 *   sweeper: read entry (t)  ->  read LANE: idle  ->  delete entry IF touches = t
 *
 * A join that lands between the sweeper's two reads changes `touches`, so an
 * entry is never removed while its lane holds work. Entries are spread over
 * a few partitions so a busy system does not write one hot key.
 */
export const REGISTRY_SHARDS = 4;

export interface RegisteredLane {
  sessionKey: string;
  touches: number;
  /** When a message last joined the lane (epoch ms; 0 for entries written before it was recorded). */
  touchedAt: number;
}

export function registryShard(sessionKey: string): number {
  return createHash("sha256").update(sessionKey).digest()[0] % REGISTRY_SHARDS;
}

export async function touchLaneRegistry(db: Db, sessionKey: string): Promise<void> {
  await db.doc.send(
    new UpdateCommand({
      TableName: db.table,
      Key: keys.laneRegistry(registryShard(sessionKey), sessionKey),
      UpdateExpression: "SET v = :v, sessionKey = :key, touchedAt = :now ADD touches :one",
      ExpressionAttributeValues: { ":v": 1, ":key": sessionKey, ":now": db.now(), ":one": 1 },
    }),
  );
}

export async function listRegisteredLanes(db: Db): Promise<RegisteredLane[]> {
  const lanes: RegisteredLane[] = [];
  for (let shard = 0; shard < REGISTRY_SHARDS; shard += 1) {
    const items = await queryItems(db, {
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
      ExpressionAttributeValues: { ":pk": keys.laneRegistry(shard, "").pk, ":prefix": prefixes.laneRegistry },
      ConsistentRead: true,
    });
    for (const item of items) lanes.push({ sessionKey: String(item.sessionKey), touches: Number(item.touches ?? 0), touchedAt: Number(item.touchedAt ?? 0) });
  }
  return lanes;
}

/** Forgets an idle lane unless someone joined it since `seen.touches` was read. */
export async function unregisterLane(db: Db, seen: RegisteredLane): Promise<boolean> {
  return conditionally(() =>
    db.doc.send(
      new DeleteCommand({
        TableName: db.table,
        Key: keys.laneRegistry(registryShard(seen.sessionKey), seen.sessionKey),
        ConditionExpression: "touches = :t",
        ExpressionAttributeValues: { ":t": seen.touches },
      }),
    ),
  );
}
