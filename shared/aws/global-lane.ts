import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import * as z from "zod";
import { keys, prefixes } from "./keys";
import { conditionally, isConditionFailure, type Db } from "./dynamo";
import { queryItems } from "./query-pages";

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
 *
 * The waiters mark (`waitersUntil` on the same item) says someone may wait,
 * so that neither an admission nor a release has to look for waiters when
 * nobody waits (issue 15: two Queries less per clean run). A waiter sets it
 * before it puts its own item; a newcomer takes a free slot without a look
 * only while no mark holds, and a release lists the waiters only while one
 * holds. The mark expires rather than being cleared: a pump that cleared it
 * on finding no waiter could race a waiter that marked just before it and
 * put its item just after, and that waiter would then be missed by every
 * release until the sweeper's tick. A pump that leaves waiters behind a full
 * lane renews it (the sweeper's pumps every minute among them).
 */
export const GLOBAL_LANE = "main";

/** How long one waiter's mark holds. */
export const WAITERS_MARK_MS = 120_000;
/** A pump that leaves waiters behind renews the mark when less than this is left (a minute's sweeper tick always does in time). */
const RENEW_MARK_BELOW_MS = 90_000;

/** True while a waiters mark holds: someone may be waiting for a slot. */
export function waitersMarked(waitersUntil: number | undefined, now: number): boolean {
  return waitersUntil !== undefined && waitersUntil >= now;
}

/** A pump that saw waiters left behind a full lane: whether the mark needs renewing now. */
export function markNeedsRenewal(waitersUntil: number | undefined, now: number): boolean {
  return waitersUntil === undefined || waitersUntil - now < RENEW_MARK_BELOW_MS;
}

export interface GlobalWaiter {
  runId: string;
  sessionKey: string;
  priority: number;
  acceptedAt: number;
}

const WaiterSchema = z.lazy(() => z.object({ runId: z.string(), sessionKey: z.string(), priority: z.number().int(), acceptedAt: z.number() }));

/** Higher priority sorts first: foreground (and interrupt) -> 0, normal -> 1, background -> 2. */
export function priorityRank(priority: number): number {
  return 1 - Math.max(-1, Math.min(1, priority));
}

/**
 * `acquired`: this call took the slot (its `since` is the returned stamp);
 * `held`: the run already had one (an earlier, possibly crashed, caller);
 * `full`: no slot free. `since` is the slot's stamp (this call's, or the
 * earlier caller's for a held one). A taken or held slot also says what the write left:
 * the slots in use right after it and the waiters mark (the item's old image
 * plus this run), so a pump knows without a read whether a slot is still free.
 */
export type SlotClaim = ({ outcome: "acquired" | "held"; since: number } & AfterClaim) | { outcome: "full" };

export interface AfterClaim {
  inUse: number;
  waitersUntil?: number;
}

/**
 * `deferToWaiters`: a newcomer's claim, which a holding waiters mark refuses
 * (answered `full`: the caller then looks at the lane's head). The pump
 * handing slots to waiters in order claims without it.
 */
export async function acquireSlot(db: Db, runId: string, cap: number, options: { deferToWaiters?: boolean } = {}): Promise<SlotClaim> {
  const since = db.now();
  const free = options.deferToWaiters ? "(size(holders) < :cap AND (attribute_not_exists(waitersUntil) OR waitersUntil < :now))" : "size(holders) < :cap";
  const acquire = async (): Promise<SlotClaim> => {
    const out = await db.doc.send(
      new UpdateCommand({
        TableName: db.table,
        Key: keys.globalSlots(GLOBAL_LANE),
        UpdateExpression: "SET holders.#run = if_not_exists(holders.#run, :now)",
        // A missing map passes the condition and then fails the update (ValidationException): see below.
        ConditionExpression: `attribute_not_exists(holders) OR attribute_exists(holders.#run) OR ${free}`,
        ExpressionAttributeNames: { "#run": runId },
        ExpressionAttributeValues: { ":now": since, ":cap": cap },
        // The whole old item (free for an update): the holders before it, and the mark.
        ReturnValues: "ALL_OLD",
      }),
    );
    const holders = (out.Attributes?.holders as Record<string, number> | undefined) ?? {};
    const heldSince = holders[runId];
    const waitersUntil = out.Attributes?.waitersUntil as number | undefined;
    const after: AfterClaim = { inUse: Object.keys(holders).length + (heldSince === undefined ? 1 : 0), ...(waitersUntil === undefined ? {} : { waitersUntil }) };
    return heldSince === undefined ? { outcome: "acquired", since, ...after } : { outcome: "held", since: heldSince, ...after };
  };
  try {
    return await acquire();
  } catch (error) {
    if (isConditionFailure(error)) return { outcome: "full" };
    if ((error as { name?: string }).name !== "ValidationException") throw error;
  }
  // The very first acquire: no map to set a path in. Create the item (once, whoever wins) and try again.
  await createSlotsItem(db);
  try {
    return await acquire();
  } catch (error) {
    if (isConditionFailure(error)) return { outcome: "full" };
    throw error;
  }
}

/** The lane's slot holders, the first run waiting for a slot, if any, and the waiters mark. */
export interface GlobalLaneHead {
  holders: Record<string, number>;
  firstWaiter?: GlobalWaiter;
  waitersUntil?: number;
}

/**
 * The slot holders and the first waiter in one Query: the lane's partition
 * holds only the SLOTS item and the waiters, and "SLOTS" sorts before every
 * "W#" key, so the first two items from SLOTS on are the holders (when the
 * item exists) and the first waiter. One request where a GetItem and a Query
 * were two (issue 15: a dispatcher's admission and every pump step).
 */
export async function globalLaneHead(db: Db): Promise<GlobalLaneHead> {
  const slots = keys.globalSlots(GLOBAL_LANE);
  const items = await queryItems(
    db,
    { KeyConditionExpression: "pk = :pk AND sk >= :slots", ExpressionAttributeValues: { ":pk": slots.pk, ":slots": slots.sk }, ConsistentRead: true },
    2,
  );
  const slotsItem = items.find((item) => item.sk === slots.sk);
  const waiter = items.find((item) => typeof item.sk === "string" && item.sk.startsWith(prefixes.globalWaiter));
  const waitersUntil = slotsItem?.waitersUntil as number | undefined;
  return {
    holders: (slotsItem?.holders as Record<string, number> | undefined) ?? {},
    ...(waiter ? { firstWaiter: WaiterSchema.parse(waiter) } : {}),
    ...(waitersUntil === undefined ? {} : { waitersUntil }),
  };
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

/** Frees the run's slot; with `since`, only the very acquisition that wrote that stamp. */
export async function releaseSlot(db: Db, runId: string, since?: number): Promise<boolean> {
  return conditionally(() =>
    db.doc.send(
      new UpdateCommand({
        TableName: db.table,
        Key: keys.globalSlots(GLOBAL_LANE),
        UpdateExpression: "REMOVE holders.#run",
        ConditionExpression: since === undefined ? "attribute_exists(holders.#run)" : "holders.#run = :since",
        ExpressionAttributeNames: { "#run": runId },
        ...(since === undefined ? {} : { ExpressionAttributeValues: { ":since": since } }),
      }),
    ),
  );
}

/** What a release left: the slots in use right after it, and the waiters mark. */
export interface AfterRelease {
  inUse: number;
  waitersUntil?: number;
}

/**
 * Frees the run's slot and answers what it left (the write's ALL_NEW image,
 * so the releaser's pump needs no read); undefined when the run held none.
 */
export async function releaseSlotCounting(db: Db, runId: string): Promise<AfterRelease | undefined> {
  try {
    const out = await db.doc.send(
      new UpdateCommand({
        TableName: db.table,
        Key: keys.globalSlots(GLOBAL_LANE),
        UpdateExpression: "REMOVE holders.#run",
        ConditionExpression: "attribute_exists(holders.#run)",
        ExpressionAttributeNames: { "#run": runId },
        ReturnValues: "ALL_NEW",
      }),
    );
    const waitersUntil = out.Attributes?.waitersUntil as number | undefined;
    return {
      inUse: Object.keys((out.Attributes?.holders as Record<string, number> | undefined) ?? {}).length,
      ...(waitersUntil === undefined ? {} : { waitersUntil }),
    };
  } catch (error) {
    if (isConditionFailure(error)) return undefined;
    throw error;
  }
}

/** runId -> since */
export async function slotHolders(db: Db): Promise<Record<string, number>> {
  const out = await db.doc.send(new GetCommand({ TableName: db.table, Key: keys.globalSlots(GLOBAL_LANE), ConsistentRead: true }));
  return (out.Item?.holders as Record<string, number> | undefined) ?? {};
}

/**
 * The mark first, then the waiter's item: a release that misses the item saw
 * no mark, so it released before the mark, and the waiter's own pump after
 * its put sees that slot free. `knownMark`: the mark as the caller just read
 * it; one that holds long enough is left as it is (the pumps renew it while
 * runs wait), which saves a saturated lane's waiter that write.
 */
export async function addGlobalWaiter(db: Db, waiter: GlobalWaiter, knownMark?: number): Promise<void> {
  if (markNeedsRenewal(knownMark, db.now())) await markWaiters(db);
  const key = keys.globalWaiter(GLOBAL_LANE, priorityRank(waiter.priority), waiter.acceptedAt, waiter.runId);
  await db.doc.send(new PutCommand({ TableName: db.table, Item: { ...key, v: 1, ...WaiterSchema.parse(waiter) } }));
}

/** Sets (or renews) the waiters mark; creates the lane's item with an empty holders map when it has none yet. */
export async function markWaiters(db: Db): Promise<void> {
  await db.doc.send(
    new UpdateCommand({
      TableName: db.table,
      Key: keys.globalSlots(GLOBAL_LANE),
      UpdateExpression: "SET waitersUntil = :until, holders = if_not_exists(holders, :none), v = if_not_exists(v, :v)",
      ExpressionAttributeValues: { ":until": db.now() + WAITERS_MARK_MS, ":none": {}, ":v": 1 },
    }),
  );
}

/**
 * Removes the waiter's item; true when this call removed it (its old image
 * came back). Of concurrent pumps handing a slot to the same waiter, exactly
 * one removes its item: that one starts it (pumpGlobalLane).
 */
export async function removeGlobalWaiter(db: Db, waiter: GlobalWaiter): Promise<boolean> {
  const key = keys.globalWaiter(GLOBAL_LANE, priorityRank(waiter.priority), waiter.acceptedAt, waiter.runId);
  const out = await db.doc.send(new DeleteCommand({ TableName: db.table, Key: key, ReturnValues: "ALL_OLD" }));
  return out.Attributes !== undefined;
}

export async function listGlobalWaiters(db: Db, limit = 25): Promise<GlobalWaiter[]> {
  const items = await queryItems(
    db,
    {
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
      ExpressionAttributeValues: { ":pk": keys.globalSlots(GLOBAL_LANE).pk, ":prefix": prefixes.globalWaiter },
      ConsistentRead: true,
    },
    limit,
  );
  return items.map((item) => WaiterSchema.parse(item));
}
