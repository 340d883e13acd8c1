import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { z } from "zod";
import { keys, prefixes } from "./keys";
import { conditionally, isConditionFailure, type Db } from "./dynamo";

/**
 * The global lane: a counting semaphore on one item. `holders` maps each run
 * holding a slot to when it took it, so taking a slot twice is harmless, a
 * release is idempotent, and the sweeper can see (and free) the slot of a
 * run that ended without giving it back.
 *
 *   acquire  SET holders.<run> = now  IF holders.<run> exists OR size(holders) < cap
 *   release  REMOVE holders.<run>     IF holders.<run> exists
 *
 * Runs that find no free slot wait as items sorted by priority rank, then
 * acceptance time; whoever frees a slot starts the first of them.
 */
export const GLOBAL_LANE = "main";

export interface GlobalWaiter {
  runId: string;
  sessionKey: string;
  priority: number;
  acceptedAt: number;
}

const WaiterSchema = z.object({ runId: z.string(), sessionKey: z.string(), priority: z.number().int(), acceptedAt: z.number() });

/** Higher priority sorts first: foreground (and interrupt) -> 0, normal -> 1, background -> 2. */
export function priorityRank(priority: number): number {
  return 1 - Math.max(-1, Math.min(1, priority));
}

export async function acquireSlot(db: Db, runId: string, cap: number): Promise<boolean> {
  const acquire = () =>
    db.doc.send(
      new UpdateCommand({
        TableName: db.table,
        Key: keys.globalSlots(GLOBAL_LANE),
        UpdateExpression: "SET holders.#run = if_not_exists(holders.#run, :now)",
        ConditionExpression: "attribute_exists(holders.#run) OR size(holders) < :cap",
        ExpressionAttributeNames: { "#run": runId },
        ExpressionAttributeValues: { ":now": db.now(), ":cap": cap },
      }),
    );
  try {
    await acquire();
    return true;
  } catch (error) {
    if (isConditionFailure(error)) {
      // The very first acquire finds no item: the condition fails on the missing map. Create it once.
      if (await createSlotsItem(db)) return conditionally(acquire);
      return false;
    }
    throw error;
  }
}

async function createSlotsItem(db: Db): Promise<boolean> {
  return conditionally(() =>
    db.doc.send(
      new PutCommand({
        TableName: db.table,
        Item: { ...keys.globalSlots(GLOBAL_LANE), v: 1, holders: {} },
        ConditionExpression: "attribute_not_exists(pk)",
      }),
    ),
  );
}

export async function releaseSlot(db: Db, runId: string): Promise<boolean> {
  return conditionally(() =>
    db.doc.send(
      new UpdateCommand({
        TableName: db.table,
        Key: keys.globalSlots(GLOBAL_LANE),
        UpdateExpression: "REMOVE holders.#run",
        ConditionExpression: "attribute_exists(holders.#run)",
        ExpressionAttributeNames: { "#run": runId },
      }),
    ),
  );
}

/** runId -> since */
export async function slotHolders(db: Db): Promise<Record<string, number>> {
  const out = await db.doc.send(new GetCommand({ TableName: db.table, Key: keys.globalSlots(GLOBAL_LANE), ConsistentRead: true }));
  return (out.Item?.holders as Record<string, number> | undefined) ?? {};
}

export async function addGlobalWaiter(db: Db, waiter: GlobalWaiter): Promise<void> {
  const key = keys.globalWaiter(GLOBAL_LANE, priorityRank(waiter.priority), waiter.acceptedAt, waiter.runId);
  await db.doc.send(new PutCommand({ TableName: db.table, Item: { ...key, v: 1, ...WaiterSchema.parse(waiter) } }));
}

export async function removeGlobalWaiter(db: Db, waiter: GlobalWaiter): Promise<void> {
  const key = keys.globalWaiter(GLOBAL_LANE, priorityRank(waiter.priority), waiter.acceptedAt, waiter.runId);
  await db.doc.send(new DeleteCommand({ TableName: db.table, Key: key }));
}

export async function listGlobalWaiters(db: Db, limit = 25): Promise<GlobalWaiter[]> {
  const out = await db.doc.send(
    new QueryCommand({
      TableName: db.table,
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
      ExpressionAttributeValues: { ":pk": keys.globalSlots(GLOBAL_LANE).pk, ":prefix": prefixes.globalWaiter },
      ConsistentRead: true,
      Limit: limit,
    }),
  );
  return (out.Items ?? []).map((item) => WaiterSchema.parse(item));
}
