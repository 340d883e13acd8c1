import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { keys, pad, prefixes } from "./keys";
import { conditionally, type Db } from "./dynamo";

/**
 * Session lane records: `LANE` holds the run that owns the lane; `Q#...` items
 * are runs waiting for it, sorted by acceptance time. Single-item conditional
 * writes only (atomic in AWS and in the local emulator).
 */
export interface LaneState {
  activeRunId?: string;
  since?: number;
}

export interface LaneWaiter {
  runId: string;
  acceptedAt: number;
}

const orderKey = (acceptedAt: number) => pad(acceptedAt);

export async function getLane(db: Db, sessionKey: string): Promise<LaneState> {
  const out = await db.doc.send(new GetCommand({ TableName: db.table, Key: keys.lane(sessionKey), ConsistentRead: true }));
  return { activeRunId: out.Item?.activeRunId as string | undefined, since: out.Item?.since as number | undefined };
}

/** Takes the lane for `runId` if it is free (or already ours). */
export async function claimLane(db: Db, sessionKey: string, runId: string): Promise<boolean> {
  return conditionally(() =>
    db.doc.send(
      new UpdateCommand({
        TableName: db.table,
        Key: keys.lane(sessionKey),
        UpdateExpression: "SET v = :v, activeRunId = :run, since = :now",
        ConditionExpression: "attribute_not_exists(activeRunId) OR activeRunId = :run",
        ExpressionAttributeValues: { ":v": 1, ":run": runId, ":now": db.now() },
      }),
    ),
  );
}

/** Frees the lane if `runId` still owns it. */
export async function releaseLane(db: Db, sessionKey: string, runId: string): Promise<boolean> {
  return conditionally(() =>
    db.doc.send(
      new UpdateCommand({
        TableName: db.table,
        Key: keys.lane(sessionKey),
        UpdateExpression: "REMOVE activeRunId, since",
        ConditionExpression: "activeRunId = :run",
        ExpressionAttributeValues: { ":run": runId },
      }),
    ),
  );
}

/** Idempotent: re-adding the same waiter overwrites the same item. */
export async function addWaiter(db: Db, sessionKey: string, waiter: LaneWaiter): Promise<void> {
  await db.doc.send(
    new PutCommand({
      TableName: db.table,
      Item: { ...keys.laneWaiter(sessionKey, orderKey(waiter.acceptedAt), waiter.runId), v: 1, ...waiter },
    }),
  );
}

export async function removeWaiter(db: Db, sessionKey: string, waiter: LaneWaiter): Promise<void> {
  await db.doc.send(
    new DeleteCommand({ TableName: db.table, Key: keys.laneWaiter(sessionKey, orderKey(waiter.acceptedAt), waiter.runId) }),
  );
}

export async function listWaiters(db: Db, sessionKey: string, limit = 100): Promise<LaneWaiter[]> {
  const out = await db.doc.send(
    new QueryCommand({
      TableName: db.table,
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
      ExpressionAttributeValues: { ":pk": keys.lane(sessionKey).pk, ":prefix": prefixes.laneWaiter },
      ConsistentRead: true,
      Limit: limit,
    }),
  );
  return (out.Items ?? []).map((item) => ({ runId: item.runId as string, acceptedAt: item.acceptedAt as number }));
}
