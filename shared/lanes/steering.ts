import { getLane, updateLane } from "../aws/lanes";
import { addSteered, isStartable, markMerged } from "../aws/lane-runs";
import { getRun, recordUserEntry, TERMINAL_STATUSES, type RunRecord } from "../aws/runs";
import type { Db } from "../aws/dynamo";
import { dedupe, withoutRuns, type LaneState } from "../core/lanes";
import type { Message, UserMessage } from "../core/messages";
import type { AttemptSteering } from "../agent/attempt";

/**
 * Queue mode `steer` across processes: a message accepted while its session
 * runs waits in the lane as a `steer` entry; the running attempt takes it at
 * its next model call. The attempt sees only this port.
 */
export type SteeringPort = AttemptSteering;

/** The transcript as the attempt's writer claim sees it. */
export interface SteeringTranscript {
  tail(): { lastMessage: Message | undefined; lastRunId: string | undefined; nextSeq: number };
  /** Commits one user turn under the attempt's writer claim. */
  commit(message: UserMessage): Promise<void>;
}

/**
 * Timeline of one drain (every step idempotent, so a crash anywhere is
 * finished by the next drain, or undone by the run's end):
 *   1. mark each message `steered` into this run    (its record, IF not started)
 *   2. remember it on this run (`steeredIds`)       (settled when the run ends)
 *   3. commit it to the transcript                  (skipped if the tail already is it)
 *   4. record its transcript seq (`userEntrySeq`)   (= delivered)
 *   5. remove it from the lane's waiting list
 * A message marked in 1 but not delivered when the run ends goes back to
 * waiting (settleMerged) and runs as a follow-up.
 */
export function createSteeringPort(db: Db, runId: string, sessionKey: string, transcript: SteeringTranscript, onLaneRead?: (lane: LaneState) => void): SteeringPort {
  const steerEntries = async (read: Promise<LaneState> = getLane(db, sessionKey)) => {
    const lane = await read;
    onLaneRead?.(lane);
    if (lane.activeRunId !== runId) return [];
    return dedupe(lane.waiting).filter((entry) => entry.kind === "steer");
  };
  // A read started by prefetch() for the next drain, taken once.
  let ahead: Promise<LaneState> | undefined;
  return {
    pending: async () => (await steerEntries()).length > 0,
    prefetch: () => {
      ahead = getLane(db, sessionKey);
      ahead.catch(() => undefined);
    },
    drain: async (beforeCommit) => {
      const read = ahead;
      ahead = undefined;
      const entries = await steerEntries(read);
      if (entries.length === 0) return [];
      // Everything below writes under the attempt's claim, after the turn still being written.
      await beforeCommit?.();
      const owner = await getRun(db, runId);
      // A run that already ended (a late attempt of a stopped execution) takes nothing.
      if (!owner || TERMINAL_STATUSES.has(owner.status)) return [];
      const { taken, gone } = await claimMessages(db, runId, entries.map((e) => e.runId));
      await addSteered(db, runId, taken.map((m) => m.runId).filter((id) => !owner.steeredIds?.includes(id)));
      const committed: UserMessage[] = [];
      for (const message of taken) {
        if (message.userEntrySeq !== undefined) continue;
        const user: UserMessage = { role: "user", content: message.message };
        const others = [...(owner.steeredIds ?? []), ...taken.map((m) => m.runId)].filter((id) => id !== message.runId);
        if (!(await alreadyCommitted(db, transcript, owner, user, others))) {
          await transcript.commit(user);
          committed.push(user);
        }
        await recordUserEntry(db, message.runId, transcript.tail().nextSeq - 1);
      }
      const done = [...taken.map((m) => m.runId), ...gone];
      await updateLane(db, sessionKey, (lane) => {
        const waiting = withoutRuns(lane.waiting, done);
        return waiting.length === lane.waiting.length ? undefined : { ...lane, waiting };
      });
      return committed;
    },
  };
}

/** Step 1 for each waiting message; `gone` = entries that can no longer be taken by anyone. */
async function claimMessages(db: Db, runId: string, ids: string[]): Promise<{ taken: RunRecord[]; gone: string[] }> {
  const taken: RunRecord[] = [];
  const gone: string[] = [];
  for (const id of ids) {
    let message = await getRun(db, id);
    if (message && isStartable(message) && (await markMerged(db, id, runId, "steered"))) {
      message = { ...message, status: "steered", mergedInto: runId };
    } else if (message && isStartable(message)) {
      message = await getRun(db, id);
    }
    if (message?.status === "steered" && message.mergedInto === runId) taken.push(message);
    // Only ended (or unknown) messages leave the list here; one folded elsewhere is settled by its carrier.
    else if (!message || TERMINAL_STATUSES.has(message.status)) gone.push(id);
  }
  return { taken, gone };
}

/**
 * A crash between commit and `userEntrySeq` leaves the message as the
 * transcript's last entry, written by this run. The same text sent twice is
 * told apart by the seq: one already recorded for another message is not ours.
 */
async function alreadyCommitted(db: Db, transcript: SteeringTranscript, owner: RunRecord, user: UserMessage, others: string[]): Promise<boolean> {
  const tail = transcript.tail();
  if (tail.lastRunId !== owner.runId || tail.lastMessage?.role !== "user" || tail.lastMessage.content !== user.content) return false;
  const seq = tail.nextSeq - 1;
  if (owner.userEntrySeq === seq) return false;
  for (const id of new Set(others)) {
    if ((await getRun(db, id))?.userEntrySeq === seq) return false;
  }
  return true;
}
