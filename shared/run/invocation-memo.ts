import type { AttemptRecord } from "../aws/attempts";
import type { RunRecord } from "../aws/runs";
import type { LaneState } from "../core/lanes";
import type { TranscriptEntry, WriterClaim } from "../aws/transcript";
import { RunEventEmitter } from "../events/emitter";
import type { RunDeps } from "./deps";

/**
 * Per-invocation reuse (issue 15): the folded Attempt task starts, runs and
 * finalizes a run in one invocation, and each of those steps used to open its
 * own event emitter (a Query for the log's last sequence number and one for
 * the subscribers, each time). Within one invocation the emitter is the only
 * writer of the run's log (the state machine is sequential; a zombie task is
 * still caught by the conditional put), so one emitter serves all of them.
 */
export function withInvocationMemo<D extends RunDeps>(deps: D): D {
  return { ...deps, memo: new Map<string, unknown>() };
}

export function emitterDeps(deps: RunDeps) {
  return { db: deps.db, pusher: deps.pusher, retentionDays: deps.config.events.retentionDays, log: deps.log };
}

/**
 * The run's emitter: the one this invocation already opened (or is opening:
 * the run start asks early, beside its other reads), else a fresh one. A
 * failed open is forgotten, so the next caller tries again.
 */
export function openRunEmitter(deps: RunDeps, runId: string, sessionKey: string, options: { startedHere?: boolean } = {}): Promise<RunEventEmitter> {
  const key = `emitter:${runId}`;
  const known = deps.memo?.get(key) as Promise<RunEventEmitter> | undefined;
  if (known) return known;
  // `startedHere`: this invocation's markRunning started the run, so its log is empty (RunEventEmitter.fresh).
  const opening = options.startedHere ? Promise.resolve(RunEventEmitter.fresh(emitterDeps(deps), runId, sessionKey)) : RunEventEmitter.open(emitterDeps(deps), runId, sessionKey);
  deps.memo?.set(key, opening);
  opening.catch(() => deps.memo?.delete(key));
  return opening;
}

/**
 * The invocation's last word on the run's event log: the emitter it opened, if
 * any, flushed with its reservation given back (a no-op when the inline
 * finalize's lifecycle end already did). A failure only leaves the reservation
 * to the next writer, which logs it as retractions (docs/protocol.md, "Event log").
 */
export async function closeRunEmitter(deps: RunDeps, runId: string): Promise<void> {
  const opening = deps.memo?.get(`emitter:${runId}`) as Promise<RunEventEmitter> | undefined;
  if (!opening) return;
  await opening
    .then((emitter) => emitter.flush())
    .catch((error: unknown) => deps.log.warn("event log not closed by this invocation", { runId, error: String(error) }));
}

/** Whether a later step of this invocation closes the run's emitter (closeRunEmitter), so a step may keep its reservation. */
export function emitterClosedLater(deps: RunDeps): boolean {
  return deps.memo !== undefined;
}

/** Marks that this invocation gave the run's transcript write claim up (the finalize need not try again). */
export function noteWriterReleased(deps: RunDeps, runId: string): void {
  deps.memo?.set(`writerReleased:${runId}`, true);
}

export function writerReleasedHere(deps: RunDeps, runId: string): boolean {
  return deps.memo?.get(`writerReleased:${runId}`) === true;
}

/**
 * The run's first attempt was written by this invocation: it is the run's
 * whole attempt list (a crashed earlier try of attempt 1 wrote the same key,
 * and each invocation runs one attempt), so the inline finalize needs no query.
 */
export function noteFirstAttempt(deps: RunDeps, record: AttemptRecord): void {
  if (record.iteration === 1) deps.memo?.set(`attempts:${record.runId}`, [record]);
}

export function attemptsKnownHere(deps: RunDeps, runId: string): AttemptRecord[] | undefined {
  return deps.memo?.get(`attempts:${runId}`) as AttemptRecord[] | undefined;
}

/** A transcript write claim with every committed entry below its head, as its holder knows them. */
export interface HeldClaim {
  claim: WriterClaim;
  entries: TranscriptEntry[];
}

/**
 * The run start keeps the claim it committed the user message under for the
 * first attempt of the same invocation (one claim, one read of the history,
 * for both). Kept in the memo only, so a crash loses nothing: the lease runs
 * out or the next task of the run takes the claim over at once (re-entrant).
 */
export function holdClaim(deps: RunDeps, held: HeldClaim): void {
  deps.memo?.set(`claim:${held.claim.runId}`, held);
}

/** The held claim of this run, handed over once (the taker commits under it and releases it). */
export function takeHeldClaim(deps: RunDeps, runId: string): HeldClaim | undefined {
  const key = `claim:${runId}`;
  const held = deps.memo?.get(key) as HeldClaim | undefined;
  deps.memo?.delete(key);
  return held;
}

/**
 * The run record the attempt's loop head read (or took from the run start's
 * write), for the inline finalize of this same invocation: it reads no record
 * of its own. The finalize needs only what was fixed before the attempt began
 * (ids, session, model, start time, channel target). What the attempt itself
 * may change meanwhile (steered messages, heartbeat) it takes from its terminal
 * write's `ALL_NEW` answer, and the status is decided by that write's
 * condition: a run ended meanwhile by someone else (the sweeper) refuses it,
 * and the finalize then reads the record like a retry would (finalize-run.ts).
 */
export function noteRunForFinalize(deps: RunDeps, run: RunRecord): void {
  deps.memo?.set(`finalizeRun:${run.runId}`, run);
}

/** The noted record, once; undefined when none was noted (the finalize reads). */
export function takeRunForFinalize(deps: RunDeps, runId: string): RunRecord | undefined {
  const key = `finalizeRun:${runId}`;
  const run = deps.memo?.get(key) as RunRecord | undefined;
  deps.memo?.delete(key);
  return run;
}

/**
 * The session lane as this invocation last read it (the attempt's steering
 * check before each model call). Releasing the lane at the run's end starts
 * from it instead of a read: that write is conditional on the lane's version,
 * so a lane that moved since (a message joined it) costs the read after all.
 */
export function noteLaneRead(deps: RunDeps, sessionKey: string, lane: LaneState): void {
  deps.memo?.set(`lane:${sessionKey}`, lane);
}

export function takeLaneRead(deps: RunDeps, sessionKey: string): LaneState | undefined {
  const key = `lane:${sessionKey}`;
  const lane = deps.memo?.get(key) as LaneState | undefined;
  deps.memo?.delete(key);
  return lane;
}

/**
 * The run record as the run start's last write left it (its `ALL_NEW`
 * answer). The loop head of the attempt right after it takes it instead of
 * reading RUN again; taken once, so a later iteration reads afresh. An abort
 * asked for in between is what the attempt's abort watch (shared/run/run-watch.ts)
 * is for, exactly as for one asked right after the loop head's read.
 */
export function noteRunRecord(deps: RunDeps, run: RunRecord): void {
  deps.memo?.set(`run:${run.runId}`, run);
}

export function takeRunRecord(deps: RunDeps, runId: string): RunRecord | undefined {
  const key = `run:${runId}`;
  const run = deps.memo?.get(key) as RunRecord | undefined;
  deps.memo?.delete(key);
  return run;
}

/**
 * This invocation recorded the run's user entry: no attempt of the run has
 * called a model before (attempts run only after that record, and an earlier
 * try that recorded it would have made this start skip the message), so the
 * run's spend counter is still zero and its first attempt need not read it.
 * A summary call in between (a compaction) spends: it clears the mark.
 */
export function noteNothingSpent(deps: RunDeps, runId: string): void {
  deps.memo?.set(`unspent:${runId}`, true);
}

export function noteSpent(deps: RunDeps, runId: string): void {
  deps.memo?.delete(`unspent:${runId}`);
}

export function nothingSpentYet(deps: RunDeps, runId: string): boolean {
  return deps.memo?.get(`unspent:${runId}`) === true;
}
