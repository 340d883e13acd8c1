import { ProvisionedThroughputExceededException } from "@aws-sdk/client-dynamodb";
import { BatchGetCommand } from "@aws-sdk/lib-dynamodb";
import { setTimeout as sleep } from "node:timers/promises";
import type { Db } from "./dynamo";
import { keys } from "./keys";
import type { LaneState } from "../core/lanes";
import { laneFromItem } from "./lanes";
import { parseRun, type RunRecord } from "./run-record";
import { parseSession, type SessionRecord } from "./sessions";

type ItemKey = { pk: string; sk: string };
type Item = Record<string, unknown>;

/** Rounds of asking again for what DynamoDB left unprocessed, and the first pause (doubled each round). */
const MAX_ROUNDS = 5;
const FIRST_PAUSE_MS = 20;

/**
 * Items of the table read in one request (BatchGetItem, strongly consistent),
 * answered in the order of `itemKeys` (undefined: no such item). Reads that do
 * not depend on each other and are needed together cost one round trip and one
 * request instead of one each (issue 15), and the same read units.
 *
 * DynamoDB may answer part of a batch and return the rest as `UnprocessedKeys`
 * (throttling) without an error. Those are asked again with a growing pause,
 * as AWS advises; still unanswered after MAX_ROUNDS, the read fails like a
 * throttled GetItem (ProvisionedThroughputExceededException), which every
 * caller already retries or surfaces.
 */
export async function getItemsTogether(db: Db, itemKeys: readonly ItemKey[]): Promise<(Item | undefined)[]> {
  const found = new Map<string, Item>();
  // DynamoDB refuses a batch that names a key twice.
  let pending = [...new Map(itemKeys.map((key) => [idOf(key), key])).values()];
  for (let round = 0; pending.length > 0; round += 1) {
    if (round === MAX_ROUNDS) {
      throw new ProvisionedThroughputExceededException({ message: `${pending.length} keys left unprocessed after ${MAX_ROUNDS} rounds of BatchGetItem`, $metadata: {} });
    }
    if (round > 0) await sleep(FIRST_PAUSE_MS * 2 ** (round - 1));
    const out = await db.doc.send(new BatchGetCommand({ RequestItems: { [db.table]: { Keys: pending, ConsistentRead: true } } }));
    for (const item of out.Responses?.[db.table] ?? []) found.set(idOf(item as ItemKey), item);
    pending = (out.UnprocessedKeys?.[db.table]?.Keys ?? []) as ItemKey[];
  }
  return itemKeys.map((key) => found.get(idOf(key)));
}

function idOf(key: ItemKey): string {
  return `${key.pk}\u0000${key.sk}`;
}

/** A run, its session's lane and (when asked) the session, read together. */
export interface RunAndLane {
  run: RunRecord | undefined;
  lane: LaneState;
  session?: SessionRecord | undefined;
}

/**
 * The reads an admission starts with: the run record (a repeat, or the
 * dispatcher's message), the session's lane and, for an intake that has not
 * read it yet, the session. One BatchGetItem instead of two or three GetItems.
 */
export async function readRunAndLane(db: Db, runId: string, sessionKey: string, options: { withSession?: boolean } = {}): Promise<RunAndLane> {
  const wanted = [keys.run(runId), keys.lane(sessionKey), ...(options.withSession ? [keys.session(sessionKey)] : [])];
  const [runItem, laneItem, sessionItem] = await getItemsTogether(db, wanted);
  return {
    run: parseRun(runItem, db.now()),
    lane: laneFromItem(laneItem),
    ...(options.withSession ? { session: parseSession(sessionItem) } : {}),
  };
}
