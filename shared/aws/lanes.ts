import { GetCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import * as z from "zod";
import { keys } from "./keys";
import { conditionally, isConditionFailure, type Db } from "./dynamo";
import { LaneContentionError } from "./errors";
import type { LaneEntry, LaneState } from "../core/lanes";

/**
 * The session lane is ONE item: the run that owns the lane and the messages
 * waiting for it, in the order the lane recorded them. One item, because
 * every lane transition then is a single-item conditional write (atomic in
 * AWS and in the local emulator; no transactions):
 *
 *   append   UpdateItem  waiting = list_append(waiting, [entry]), ver += 1
 *                        IF size(waiting) < cap           (intake, any number at once)
 *   replace  UpdateItem  SET the whole state, ver = n + 1
 *                        IF ver = n                        (claim, hand-off, drain, drop)
 *
 * Appends never read first, so concurrent intakes never retry each other;
 * the rarer whole-state writes re-read and re-decide on a conflict. The list
 * order is the acceptance order: DynamoDB serializes writes to one item.
 * A few dozen entries of ~120 bytes keep the item far below 400 KB (the
 * per-session cap bounds the list).
 */
const EntrySchema = z.lazy(() => z.object({
  runId: z.string(),
  acceptedAt: z.number(),
  kind: z.enum(["run", "steer", "collect"]),
  priority: z.number().int(),
  debounceMs: z.number().int().optional(),
}));

const LaneItemSchema = z.lazy(() => z.object({
  // v1 items (before queue modes) had only activeRunId/since; they read as a lane with no waiting list.
  v: z.union([z.literal(1), z.literal(2)]).optional(),
  activeRunId: z.string().optional(),
  since: z.number().optional(),
  claimedBy: z.string().optional(),
  waiting: z.array(EntrySchema).optional(),
  dropped: z.array(z.string()).optional(),
  pending: z.object({ members: z.array(z.string()), notes: z.array(z.string()) }).optional(),
  ver: z.number().int().optional(),
  accepted: z.number().int().optional(),
}));

/** The lane as an item holds it (a missing item: an empty lane). */
export function laneFromItem(item: Record<string, unknown> | undefined): LaneState {
  if (!item) return { waiting: [], dropped: [], ver: 0 };
  const parsed = LaneItemSchema.parse(item);
  return {
    ...(parsed.activeRunId !== undefined ? { activeRunId: parsed.activeRunId } : {}),
    ...(parsed.since !== undefined ? { since: parsed.since } : {}),
    ...(parsed.claimedBy !== undefined ? { claimedBy: parsed.claimedBy } : {}),
    waiting: parsed.waiting ?? [],
    dropped: parsed.dropped ?? [],
    ...(parsed.pending ? { pending: parsed.pending } : {}),
    ver: parsed.ver ?? 0,
    ...(parsed.accepted !== undefined ? { accepted: parsed.accepted } : {}),
  };
}

export async function getLane(db: Db, sessionKey: string): Promise<LaneState> {
  const out = await db.doc.send(new GetCommand({ TableName: db.table, Key: keys.lane(sessionKey), ConsistentRead: true }));
  return laneFromItem(out.Item);
}

/**
 * Appends one waiting entry and takes the session's next acceptance number
 * (`accepted`); returns the lane as written (so the caller learns its exact
 * place and number), or undefined when the lane already holds `cap`
 * waiting entries.
 */
export async function appendToLane(db: Db, sessionKey: string, entry: LaneEntry, cap: number): Promise<LaneState | undefined> {
  try {
    const out = await db.doc.send(
      new UpdateCommand({
        TableName: db.table,
        Key: keys.lane(sessionKey),
        UpdateExpression:
          "SET v = :v, sessionKey = :key, waiting = list_append(if_not_exists(waiting, :empty), :entry), ver = if_not_exists(ver, :zero) + :one, accepted = if_not_exists(accepted, :zero) + :one",
        ConditionExpression: "attribute_not_exists(waiting) OR size(waiting) < :cap",
        ExpressionAttributeValues: {
          ":v": 2,
          ":key": sessionKey,
          ":empty": [],
          ":entry": [EntrySchema.parse(entry)],
          ":zero": 0,
          ":one": 1,
          ":cap": cap,
        },
        ReturnValues: "ALL_NEW",
      }),
    );
    return laneFromItem(out.Attributes);
  } catch (error) {
    if (isConditionFailure(error)) return undefined;
    throw error;
  }
}

/**
 * Replaces the lane state if nobody wrote it since `from` was read. False on
 * a conflict: the caller re-reads and decides again.
 */
export async function replaceLane(db: Db, sessionKey: string, from: LaneState, to: Omit<LaneState, "ver">): Promise<boolean> {
  const sets = ["v = :v", "sessionKey = :key", "waiting = :waiting", "dropped = :dropped", "ver = :next"];
  const removes: string[] = [];
  const values: Record<string, unknown> = {
    ":v": 2,
    ":key": sessionKey,
    ":waiting": to.waiting.map((entry) => EntrySchema.parse(entry)),
    ":dropped": to.dropped,
    ":next": from.ver + 1,
  };
  if (to.activeRunId !== undefined) {
    sets.push("activeRunId = :active", "since = :since");
    values[":active"] = to.activeRunId;
    values[":since"] = to.since ?? db.now();
    if (to.claimedBy !== undefined) {
      sets.push("claimedBy = :by");
      values[":by"] = to.claimedBy;
    } else {
      removes.push("claimedBy");
    }
  } else {
    removes.push("activeRunId", "since", "claimedBy");
  }
  if (to.pending) {
    sets.push("pending = :pending");
    values[":pending"] = to.pending;
  } else {
    removes.push("pending");
  }
  const condition = from.ver === 0 ? "attribute_not_exists(ver)" : "ver = :ver";
  if (from.ver !== 0) values[":ver"] = from.ver;
  return conditionally(() =>
    db.doc.send(
      new UpdateCommand({
        TableName: db.table,
        Key: keys.lane(sessionKey),
        UpdateExpression: `SET ${sets.join(", ")}${removes.length > 0 ? ` REMOVE ${removes.join(", ")}` : ""}`,
        ConditionExpression: condition,
        ExpressionAttributeValues: values,
      }),
    ),
  );
}

/** How often a whole-state write may lose to concurrent writers before the caller gives up (and is retried itself). */
export const MAX_LANE_CONFLICTS = 50;

/**
 * Read-decide-write with retries: `decide` returns the new state, or
 * undefined for "nothing to change". Resolves with the state it wrote (or
 * the unchanged one).
 */
export async function updateLane(
  db: Db,
  sessionKey: string,
  decide: (lane: LaneState) => Omit<LaneState, "ver"> | undefined,
  /** The lane as the caller just read it: the first try skips the read. */
  seen?: LaneState,
): Promise<{ lane: LaneState; changed: boolean }> {
  for (let attempt = 0; attempt < MAX_LANE_CONFLICTS; attempt += 1) {
    const lane = attempt === 0 && seen ? seen : await getLane(db, sessionKey);
    const next = decide(lane);
    if (!next) return { lane, changed: false };
    if (await replaceLane(db, sessionKey, lane, next)) return { lane: { ...next, ver: lane.ver + 1 }, changed: true };
    await jitter(attempt);
  }
  throw new LaneContentionError(sessionKey, MAX_LANE_CONFLICTS);
}

function jitter(attempt: number): Promise<void> {
  const ms = Math.random() * Math.min(50, 2 + attempt * 5);
  return new Promise((resolve) => setTimeout(resolve, ms));
}
