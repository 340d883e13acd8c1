import { appendToLane, getLane, updateLane } from "../aws/lanes";
import { isStartable, markMerged, revertUndeliveredSteer, setStartMessage } from "../aws/lane-runs";
import { touchLaneRegistry } from "../aws/lane-registry";
import { getRun, isInFlight, markQueued, TERMINAL_STATUSES, type RunRecord } from "../aws/runs";
import { LaneContentionError } from "../aws/errors";
import type { Db } from "../aws/dynamo";
import { claimedByAnother, composeRunMessage, isWaiting, nextStart, withoutRuns, type Claimer, type LaneEntry, type LaneState } from "../core/lanes";
import { PRIORITY } from "../core/queue-settings";
import { globalCap, type LaneDeps } from "./deps";
import { ensureStarted, releaseGlobalSlot } from "./global";
import { batchFits } from "./batch-budget";
import { settleMerged } from "./settle";

export type { LaneDeps } from "./deps";

/**
 * A collect batch that is due within this long is waited for by the pumping
 * Lambda itself (it is about to return anyway); a later one is started by
 * the sweeper's next tick (docs/lanes.md explains the choice).
 */
export const MAX_INLINE_WAIT_MS = 2_000;

/** Whole-state lane steps one pump may take (each re-reads the lane). */
const MAX_STEPS = 64;

export type AdmitOutcome = "started" | "queued" | "duplicate";

export type PumpResult =
  | { state: "idle" }
  | { state: "busy"; runId: string }
  /** A collect batch waits for its debounce; nothing runs until `dueAt`. */
  | { state: "not_due"; dueAt: number };

/**
 * The dispatcher's admission of one queue message: make sure the run is in
 * its lane (intake put it there; a crashed intake may not have), then pump.
 * Safe to repeat for the same run (SQS redelivery, a crash between any two
 * writes): every step is idempotent and the pump re-derives what to do from
 * the records.
 */
/**
 * `lane`: the run's lane, read by the caller with the run record (the queue
 * message names the session); else read here.
 */
export async function admitRun(deps: LaneDeps, run: RunRecord, lane?: LaneState): Promise<AdmitOutcome> {
  if (!isStartable(run)) return "duplicate";
  const seen = await ensureInLane(deps.db, run, lane);
  // The lane as just read: the pump's first step decides on it (its writes are conditional on its
  // version, so a lane that moved meanwhile only costs that step a fresh read).
  const pumped = await pumpLane(deps, run.sessionKey, MAX_INLINE_WAIT_MS, undefined, seen, run);
  if (pumped.state === "busy" && pumped.runId === run.runId) return "started";
  // Conditional (accepted -> queued): a no-op for a run that started, ended or was folded meanwhile.
  return (await markQueued(deps.db, run.runId)) ? "queued" : "duplicate";
}

/** Joins the run to its lane unless it is already there (waiting or owning it); the lane read when it was there. */
export async function ensureInLane(db: Db, run: RunRecord, known?: LaneState): Promise<LaneState | undefined> {
  const lane = known ?? (await getLane(db, run.sessionKey));
  if (isWaiting(lane, run.runId)) return lane;
  const fresh = await getRun(db, run.runId);
  if (!fresh || !isStartable(fresh)) return;
  // The cap was applied when the message was accepted; a repair never refuses it.
  await appendToLane(db, run.sessionKey, entryOf(fresh), Number.MAX_SAFE_INTEGER);
  await touchLaneRegistry(db, run.sessionKey);
  return undefined;
}

export function entryOf(run: RunRecord): LaneEntry {
  const lane: { kind: LaneEntry["kind"]; priority: number; debounceMs?: number } = run.lane ?? { kind: "run", priority: PRIORITY.normal };
  return {
    runId: run.runId,
    acceptedAt: run.acceptedAt,
    kind: lane.kind,
    priority: lane.priority,
    ...(lane.debounceMs !== undefined ? { debounceMs: lane.debounceMs } : {}),
  };
}

/**
 * Makes the lane consistent and moving: a lane whose run ended is freed (its
 * folded messages settled), a lane owned by a run that has not started gets
 * it started, a free lane goes to the next waiting message. Called after
 * admission, after every run ends, and by the sweeper. A collect batch due
 * within MAX_INLINE_WAIT_MS is waited for here.
 */
/**
 * `handedOff`: a run that ended and whose global slot its caller already gave
 * back (shared/lanes/handoff.ts). An ended run never changes again, so its
 * record is not read again, and its slot is not released a second time (a
 * refused write and a pump of the global lane less).
 */
/**
 * `admitted`: the record the dispatcher read for this admission. When the lane
 * goes to that run, the pump starts it from this record instead of reading it
 * again: a run that ended in between (an abort before start) is harmless, its
 * execution's first Attempt sees it ended and its finalize frees lane and slot
 * (prepareAndStart, ensureStarted).
 */
export async function pumpLane(
  deps: LaneDeps,
  sessionKey: string,
  maxInlineWaitMs = MAX_INLINE_WAIT_MS,
  handedOff?: RunRecord,
  seenLane?: LaneState,
  admitted?: RunRecord,
): Promise<PumpResult> {
  let budget = maxInlineWaitMs;
  let firstLane = seenLane;
  let known = admitted;
  const me = claimerOf(handedOff, admitted);
  for (;;) {
    const result = await pumpOnce(deps, sessionKey, me, handedOff, firstLane, known);
    firstLane = undefined;
    // Only the first round: after a wait the record may be older than a read would be.
    known = undefined;
    if (result.state !== "not_due") return result;
    // A batch that keeps growing keeps moving its deadline: the wait is bounded in total, not per round.
    const wait = Math.max(0, result.dueAt - deps.db.now()) + 5;
    if (wait > budget) return result;
    budget -= wait;
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
}

/** The hand-off of an ended run, or the admission of a run: the same identity when the work is repeated. */
function claimerOf(handedOff: RunRecord | undefined, admitted: RunRecord | undefined): Claimer | undefined {
  if (handedOff) return `handoff:${handedOff.runId}`;
  if (admitted) return `admit:${admitted.runId}`;
  return undefined;
}

async function pumpOnce(deps: LaneDeps, sessionKey: string, me: Claimer | undefined, handedOff?: RunRecord, seenLane?: LaneState, admitted?: RunRecord): Promise<PumpResult> {
  // The lane as this pump last read or wrote it: the next step decides on it without a read (every
  // write is conditional on its version, so a lane that moved meanwhile only costs a fresh read).
  let known = seenLane;
  for (let step = 0; step < MAX_STEPS; step += 1) {
    const lane = known ?? await getLane(deps.db, sessionKey);
    known = undefined;
    if (lane.activeRunId !== undefined) {
      const ended = handedOff?.runId === lane.activeRunId && TERMINAL_STATUSES.has(handedOff.status);
      const active = ended ? handedOff : await getRun(deps.db, lane.activeRunId);
      if (active && (isStartable(active) || isInFlight(active.status))) {
        // Not started yet: its claimer died before the start (this pump finishes it), or is starting it now.
        if (isStartable(active) && !claimedByAnother(lane, me, deps.db.now())) await prepareAndStart(deps, sessionKey, lane, active);
        return { state: "busy", runId: active.runId };
      }
      known = await releaseEnded(deps, sessionKey, lane, active, ended);
      continue;
    }
    const next = nextStart(lane, deps.db.now());
    if (next.type === "none") return { state: "idle" };
    if (next.type === "not_due") return { state: "not_due", dueAt: next.dueAt };
    // The run this admission read is not read again (see pumpLane); any other owner is.
    const fromAdmission = admitted?.runId === next.owner.runId ? admitted : undefined;
    admitted = undefined;
    const owner = fromAdmission ?? await getRun(deps.db, next.owner.runId);
    if (!owner || !isStartable(owner)) {
      if (!(owner && (await reclaimUndelivered(deps, owner)))) await removeFromLane(deps, sessionKey, [next.owner.runId]);
      continue;
    }
    const claimed = await claim(deps, sessionKey, lane, next.owner, next.members, me);
    if (claimed) {
      await prepareAndStart(deps, sessionKey, claimed, owner, fromAdmission !== undefined);
      return { state: "busy", runId: owner.runId };
    }
  }
  throw new LaneContentionError(sessionKey, MAX_STEPS);
}

/**
 * Takes the free lane for `owner`. The collect members to fold in and the
 * dropped-message notes are written with the claim (`pending`), so a crash
 * after this write leaves the work described where the next pump finds it.
 */
async function claim(deps: LaneDeps, sessionKey: string, seen: LaneState, owner: LaneEntry, members: LaneEntry[], me: Claimer | undefined): Promise<LaneState | undefined> {
  const { lane, changed } = await updateLane(deps.db, sessionKey, (lane) => {
    if (lane.ver !== seen.ver || lane.activeRunId !== undefined) return undefined;
    const memberIds = members.map((m) => m.runId);
    const pending = memberIds.length > 0 || lane.dropped.length > 0 ? { members: memberIds, notes: lane.dropped } : undefined;
    return {
      activeRunId: owner.runId,
      since: deps.db.now(),
      ...(me ? { claimedBy: me } : {}),
      waiting: withoutRuns(lane.waiting, [owner.runId]),
      dropped: [],
      ...(pending ? { pending } : {}),
    };
  }, seen);
  return changed ? lane : undefined;
}

/**
 * Completes the claim's pending work (fold the batch, add the notes), then
 * starts the run. What did not fit the run record (batch-budget.ts) goes
 * back: members keep their place in `waiting`, notes return to `dropped`.
 */
async function prepareAndStart(deps: LaneDeps, sessionKey: string, lane: LaneState, owner: RunRecord, justRead = false): Promise<void> {
  if (lane.pending) {
    const { deferred, notesDelivered } = await foldIntoOwner(deps, owner, lane.pending.members, lane.pending.notes);
    await updateLane(
      deps.db,
      sessionKey,
      (now) => {
        if (now.activeRunId !== owner.runId || !now.pending) return undefined;
        const { pending, ...rest } = now;
        const taken = pending.members.filter((id) => !deferred.includes(id));
        return { ...rest, waiting: withoutRuns(now.waiting, taken), ...(notesDelivered ? {} : { dropped: [...pending.notes, ...now.dropped] }) };
      },
      lane,
    );
  }
  // A run that ends before its execution starts (an abort) is harmless: StartRun sees it ended.
  await ensureStarted(deps, owner, justRead);
}

/**
 * Folds the members, in lane order, while the record stays within its budget
 * (the same members on a repeat after a crash: the sizes do not change).
 * `deferred`: the members from the first that did not fit on, not marked.
 */
async function foldIntoOwner(deps: LaneDeps, owner: RunRecord, memberIds: string[], notes: string[]): Promise<{ deferred: string[]; notesDelivered: boolean }> {
  const own = owner.ownMessage ?? owner.message;
  const deliver = batchFits(owner, own, [], notes) ? notes : [];
  const folded: RunRecord[] = [];
  let deferred: string[] = [];
  for (const [index, id] of memberIds.entries()) {
    const member = await getRun(deps.db, id);
    if (!member) continue;
    const already = member.status === "collected" && member.mergedInto === owner.runId;
    if (!already && !isStartable(member)) continue;
    if (!batchFits(owner, own, [...folded, member], deliver)) {
      deferred = memberIds.slice(index);
      break;
    }
    if (already || (await markMerged(deps.db, id, owner.runId, "collected"))) folded.push(member);
  }
  const outcome = { deferred, notesDelivered: deliver.length === notes.length };
  if (folded.length === 0 && deliver.length === 0) return outcome;
  const texts = folded.map((member) => member.ownMessage ?? member.message);
  await setStartMessage(deps.db, owner.runId, composeRunMessage(own, texts, deliver), own, folded.map((m) => m.runId));
  return outcome;
}

/**
 * The lane's owner ended (or vanished): settle what was folded into it, free
 * its global slot, free the lane. Notes it never delivered go back to the
 * lane for the next run. Returns the lane as this write left it (undefined when
 * it wrote nothing: the next step reads it).
 */
async function releaseEnded(deps: LaneDeps, sessionKey: string, seen: LaneState, run: RunRecord | undefined, slotReleased = false): Promise<LaneState | undefined> {
  const runId = seen.activeRunId;
  if (runId === undefined) return undefined;
  if (run && TERMINAL_STATUSES.has(run.status)) {
    // Steer entries still waiting may have been claimed by this run just before it ended (or crashed).
    const steers = seen.waiting.filter((entry) => entry.kind === "steer").map((entry) => entry.runId);
    await settleMerged(deps, run, [...(seen.pending?.members ?? []), ...steers]);
  }
  const released = await updateLane(
    deps.db,
    sessionKey,
    (lane) => {
      if (lane.activeRunId !== runId) return undefined;
      const { activeRunId: _a, since: _s, claimedBy: _c, pending, ...rest } = lane;
      return { ...rest, dropped: [...(pending?.notes ?? []), ...lane.dropped] };
    },
    seen,
  );
  if (globalCap(deps) > 0 && !slotReleased) await releaseGlobalSlot(deps, runId);
  // Only a lane this call wrote is known to be current as of its write; a global pump in between
  // only touches the global lane.
  return released.changed ? released.lane : undefined;
}

/**
 * A waiting message marked `steered` by a run that ended before writing it
 * down (a crash between the drain's first two writes): it goes back to
 * waiting instead of being dropped. True when it did.
 */
async function reclaimUndelivered(deps: LaneDeps, message: RunRecord): Promise<boolean> {
  if (message.status !== "steered" || message.userEntrySeq !== undefined || !message.mergedInto) return false;
  const carrier = await getRun(deps.db, message.mergedInto);
  if (carrier && !TERMINAL_STATUSES.has(carrier.status)) return false;
  return revertUndeliveredSteer(deps.db, message.runId, message.mergedInto);
}

/** Removes entries that can no longer start (ended, folded elsewhere, or without a record). */
export async function removeFromLane(deps: LaneDeps, sessionKey: string, runIds: string[]): Promise<void> {
  await updateLane(deps.db, sessionKey, (lane) => {
    const waiting = withoutRuns(lane.waiting, runIds);
    return waiting.length === lane.waiting.length ? undefined : { ...lane, waiting };
  });
}
