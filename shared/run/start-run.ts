import { appendTurnWithEntries, claimWriterWithHistory, releaseWriter } from "../aws/transcript";
import { recordLaneWait } from "../observability/run-metrics";
import { getRun, markFirstStartReturning, markRunning, recordUserEntryReturning, TERMINAL_STATUSES, type RunRecord } from "../aws/runs";
import { RunNotFoundError } from "../aws/errors";
import { touchOpenedSession, touchSession } from "../aws/sessions";
import { initialLoopState, type FinalizeDecision, type LoopState } from "../core/run-loop";
import { modelChain } from "../providers/model-refs";
import { emitterClosedLater, holdClaim, noteNothingSpent, noteRunRecord, openRunEmitter } from "./invocation-memo";
import { depsForConfigVersion, type RunDeps } from "./deps";
import type { LoopPointer } from "./pointer";
import { profileCounts } from "./profiles";
import { enterSession, sessionStartEntries } from "./session-boundary";
import { runStartHooks } from "./run-start-hooks";
import { handedOffAlready, supersededBy } from "./hand-off";
import { handOffName } from "../core/execution-names";

/** Lease for short steps that only append a message. */
const SHORT_LEASE_MS = 60_000;

/**
 * First task of a run: mark it running, run the run-start hooks
 * (message_received, before_model_resolve, before_agent_run: ./run-start-hooks.ts),
 * persist the user's message under the session write claim, announce
 * `lifecycle start`. Idempotent, because Step
 * Functions may run a task twice: the message is appended once (the last
 * committed entry tells) and `start` is emitted only into an empty event log.
 */
export interface StartOptions {
  /**
   * The first attempt runs in this same invocation (the folded Attempt task):
   * the claim the user message is committed under is kept, with this lease,
   * for that attempt (shared/run/invocation-memo.ts holdClaim) instead of
   * being given up and taken again.
   */
  holdClaimForMs?: number;
  /**
   * The run machine execution this start runs in (shared/run/hand-off.ts):
   * when the run record names a newer re-drive, or this execution's own
   * hand-off (this is Step Functions' retry of a task that handed off), the
   * run goes on there, and this start writes nothing and answers `ownedBy`.
   */
  entry?: string;
  /** The run record the caller read in this invocation (the run machine's RecoverAttempt): not read again. */
  read?: RunRecord;
}

export async function startRun(anyDeps: RunDeps, runId: string, carried?: LoopState, options: StartOptions = {}): Promise<StartPointer> {
  const startedAt = anyDeps.db.now();
  // The first execution's start marks the run running before reading it: the write answers the record.
  const firstStart = !carried && !options.read && isFirstExecution(runId, options.entry);
  const markedFirst = firstStart ? await markFirstStartReturning(anyDeps.db, runId, startedAt, anyDeps.executions.firstExecutionArn?.(runId)) : undefined;
  const found = markedFirst ?? options.read ?? (await getRun(anyDeps.db, runId));
  if (!found) throw new RunNotFoundError(runId);
  // Continue-as-new: a long run goes on in this fresh execution with its loop state.
  if (carried) return { runId, loop: carried };
  const deps = await depsForConfigVersion(anyDeps, found.configVersion);
  let run = found;
  let ended: FinalizeDecision | undefined;
  const ownedBy = options.entry === undefined ? undefined : ownerBesides(found, options.entry);
  if (!ownedBy && !TERMINAL_STATUSES.has(run.status)) {
    // Independent items, written at once (a start whose first-start mark was refused takes the retry's
    // path, as before). markRunning is false on a redelivery: the lane wait is measured once.
    const [marked, { session, indexed }] = await Promise.all([
      markedFirst !== undefined || markRunning(deps.db, runId, startedAt, deps.executions.firstExecutionArn?.(runId)),
      // A session the intake opened for this run already names it: read, not written again.
      run.openedSession ? touchOpenedSession(deps.db, run.sessionKey, runId) : touchSession(deps.db, run.sessionKey, runId),
    ]);
    // A start recorded just now: the run's log is empty, its head is not read. A retried start reads it
    // (while the hooks and the user message below are written).
    const opening = openRunEmitter(deps, runId, run.sessionKey, { startedHere: marked });
    opening.catch(() => undefined);
    if (marked) recordLaneWait(startedAt - run.acceptedAt);
    if (run.userEntrySeq === undefined) {
      // Once per run (a retried StartRun after the message was persisted does not repeat them).
      const hooked = await runStartHooks(deps, run);
      run = { ...run, model: hooked.model };
      ended = hooked.ended;
      if (!ended) {
        // In lane order: a `/new` starts a new transcript; a run accepted before one adopts it.
        const entered = await enterSession(deps, run, session);
        await persistUserMessage(deps, entered.run, entered.userText, options.holdClaimForMs);
      }
    }
    // The session's index copy was written beside the transcript's writes; the start is not done without it.
    await indexed;
    const emitter = await opening;
    if (emitter.lastSeq === 0) {
      emitter.emit("lifecycle", { phase: "start", startedAt: run.startedAt ?? startedAt, model: run.model });
    }
    // In the folded Attempt task the attempt goes on with this same emitter: `start` is logged and sent
    // while it loads and calls the model, ahead of its events (one queue), and its flush waits for it.
    // A Lambda killed before the write leaves the log empty, and the retried task's start emits it then.
    if (!emitterClosedLater(deps)) await emitter.flush();
  }
  const loop = initialLoopState(modelChain(deps.config, run.model).length, {
    profileCounts: profileCounts(deps.config, run.model),
    iterationsPerExecution: deps.config.loop.iterationsPerExecution,
    ...(deps.config.loop.maxHistoryEvents < 25_000 ? { maxHistoryEvents: deps.config.loop.maxHistoryEvents } : {}),
    configVersion: run.configVersion,
    ...(run.redriveGeneration ? { redrive: run.redriveGeneration } : {}),
  });
  if (ownedBy) return { runId, loop, ownedBy };
  // A blocked run goes straight to FinalizeRun through the Attempt task (shared/run/loop-iteration.ts).
  return ended ? { runId, loop, decision: ended } : { runId, loop };
}

/** The run's own first execution (named after the run), or a caller outside the run machine. */
function isFirstExecution(runId: string, entry: string | undefined): boolean {
  return entry === undefined || entry === runId;
}

function ownerBesides(run: RunRecord, entry: string): string | undefined {
  return supersededBy(run, entry) ?? (handedOffAlready(run, entry) ? handOffName(entry) : undefined);
}

/**
 * StartRun's output: the loop, and a finalize decision when the run ended
 * before its first attempt; `ownedBy` when another execution drives the run.
 */
export type StartPointer = LoopPointer & { decision?: FinalizeDecision; ownedBy?: string };

async function persistUserMessage(deps: RunDeps, run: RunRecord, text: string, holdForMs: number | undefined): Promise<void> {
  // With the history in the claim's read: the attempt that takes the held claim needs it (and an
  // empty transcript costs no read at all).
  const claimed = await claimWriterWithHistory(deps.db, run.sessionId, run.runId, {
    leaseMs: holdForMs ?? SHORT_LEASE_MS,
    acquireTimeoutMs: deps.config.session.writeLockAcquireTimeoutMs,
    allowReentrant: true,
  });
  const hold = holdForMs !== undefined;
  let claim = claimed.claim;
  let entries = claimed.entries;
  try {
    const alreadyAppended = claim.lastRunId === run.runId && claim.lastMessage?.role === "user";
    if (!alreadyAppended) {
      // Without a held claim, the commit gives the claim up too (one write less per turn).
      const leading = await sessionStartEntries(deps, run, claim);
      const committed = await appendTurnWithEntries(deps.db, claim, [{ role: "user", content: text }], leading, { release: !hold });
      claim = committed.claim;
      entries = [...entries, ...committed.entries];
    }
    const recorded = await recordUserEntryReturning(deps.db, run.runId, claim.nextSeq - 1);
    // The attempt right after (same invocation) starts from this record instead of reading it.
    if (recorded && hold) noteRunRecord(deps, recorded);
    noteNothingSpent(deps, run.runId);
  } catch (error) {
    await releaseWriter(deps.db, claim);
    throw error;
  }
  if (hold) holdClaim(deps, { claim, entries });
  else await releaseWriter(deps.db, claim);
}

export { emitterDeps } from "./invocation-memo";
