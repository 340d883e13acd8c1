import { appendToLane, getLane, updateLane } from "../aws/lanes";
import { endUnstarted, isStartable } from "../aws/lane-runs";
import { getRun, type RunRecord } from "../aws/runs";
import type { Db } from "../aws/dynamo";
import { LaneContentionError } from "../aws/errors";
import { dropVictim, summaryLine, withoutRuns, type LaneState } from "../core/lanes";
import type { QueueSettings } from "../core/queue-settings";
import { entryOf } from "../lanes/pump";

export const QUEUE_FULL_ERROR = "Rejected: the session queue is full.";
export const DROPPED_ERROR = "Dropped: the session queue was full and newer messages arrived.";

/** Rounds of "full -> drop the oldest -> append" before giving up (each loses only to other intakes). */
const MAX_JOIN_ROUNDS = 20;

export type JoinResult =
  | { joined: true; lane: LaneState; dropped: string[] }
  | { joined: false; reason: "queue_full" };

/**
 * Puts an accepted message into its session lane (one atomic append); the
 * caller then registers the lane for the sweeper. When the lane already
 * holds `cap` waiting messages the drop policy decides: `new` refuses this message (its
 * record ends as rejected), `old` and `summarize` end the oldest waiting
 * message and retry (`summarize` leaves a one-line summary for the next run).
 */
export async function joinLane(db: Db, run: RunRecord, settings: QueueSettings): Promise<JoinResult> {
  const dropped: string[] = [];
  for (let round = 0; round < MAX_JOIN_ROUNDS; round += 1) {
    const lane = await appendToLane(db, run.sessionKey, entryOf(run), settings.cap);
    // The caller registers the lane for the sweeper (acceptRun: beside the queue send).
    if (lane) return { joined: true, lane, dropped };
    if (settings.drop === "new") {
      await endUnstarted(db, run.runId, QUEUE_FULL_ERROR);
      return { joined: false, reason: "queue_full" };
    }
    const victim = await dropOldest(db, run.sessionKey, settings);
    if (victim) dropped.push(victim);
  }
  throw new LaneContentionError(run.sessionKey, MAX_JOIN_ROUNDS);
}

/**
 * Ends the oldest waiting message (if it has not started meanwhile) and
 * takes it off the list. Ending it first means a crash between the two
 * writes leaves an ended message in the list, which the pump removes.
 */
async function dropOldest(db: Db, sessionKey: string, settings: QueueSettings): Promise<string | undefined> {
  const lane = await getLane(db, sessionKey);
  if (lane.waiting.length < settings.cap) return undefined;
  const victim = dropVictim(lane);
  if (!victim) return undefined;
  const record = await getRun(db, victim.runId);
  const ended = record !== undefined && isStartable(record) && (await endUnstarted(db, victim.runId, DROPPED_ERROR));
  if (record && isStartable(record) && !ended) return undefined; // it moved on meanwhile; look again
  const note = ended && settings.drop === "summarize" ? summaryLine(record.ownMessage ?? record.message) : undefined;
  await updateLane(db, sessionKey, (now) => {
    if (!now.waiting.some((entry) => entry.runId === victim.runId)) return undefined;
    return { ...now, waiting: withoutRuns(now.waiting, [victim.runId]), dropped: note ? [...now.dropped, note] : now.dropped };
  });
  return ended ? victim.runId : undefined;
}
