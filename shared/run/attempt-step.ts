import type { AttemptReport } from "../agent/attempt";
import { runAttemptSession } from "../agent/attempt-session";
import { putAttempt, type AttemptRecord } from "../aws/attempts";
import { recordModelUsage } from "../observability/run-metrics";
import { appendTurn, claimWriterWithHistory, releaseWriter, type WriterClaim } from "../aws/transcript";
import type { RunRecord } from "../aws/runs";
import { THINKING_LEVELS, type Decision, type ThinkingLevel } from "../core/run-loop";
import { calibrationOf } from "../core/overflow";
import { addUsage, toolCallsOf, type Message } from "../core/messages";
import { modelHistory } from "../core/session-view";
import { createAttemptSink } from "../events/attempt-sink";
import { resolveModel } from "../providers/registry";
import type { AttemptSink } from "../agent/attempt";
import type { Prelude } from "./attempt-prelude";
import { wireAttemptSession } from "./attempt-wiring";
import type { RunDeps } from "./deps";
import { runDeadline, runLoopIteration, type IterationInput } from "./loop-iteration";
import type { StepPointer } from "./pointer";
import type { PersistableAttempt } from "./loop-iteration";
import { emitterClosedLater, noteFirstAttempt, noteLaneRead, noteWriterReleased, openRunEmitter, takeHeldClaim, type HeldClaim } from "./invocation-memo";
import { createSteeringPort } from "../lanes/steering";
import { committedAnswer } from "./committed-answer";
import { channelPreviewFor, withPreview } from "../channels/preview-sink";
import { isSuperseded } from "./run-watch";
import { WriterFencedError } from "../aws/errors";

/** Stop starting new model calls when less than this is left before the Lambda deadline. */
export const YIELD_MARGIN_MS = 60_000;

export interface StepClock {
  /** Milliseconds left before the Lambda is killed. */
  remainingMs(): number;
}

/**
 * One iteration of the outer loop (shared/run/loop-iteration.ts: loop head,
 * auth profile, compaction, decision) around one attempt on the latest
 * committed transcript. Returns pointers and counters only.
 */
export async function attemptStep(deps: RunDeps, input: IterationInput, clock: StepClock): Promise<StepPointer> {
  return runLoopIteration(deps, input, (run, prelude, signal, wrapSink) => executeAttempt(deps, run, prelude, clock, signal, wrapSink));
}

async function executeAttempt(
  deps: RunDeps,
  run: RunRecord,
  prelude: Prelude,
  clock: StepClock,
  signal: AbortSignal,
  wrapSink: <S extends AttemptSink>(sink: S) => S,
): Promise<AttemptReport & PersistableAttempt> {
  const { loop, ref } = prelude;
  // The chosen auth profile's key is in prelude.config.
  const { provider, model } = resolveModel(prelude.config, ref);
  const startedAt = deps.db.now();
  // The history the model sees is read under the claim, in the claim's own read (no separate last-entry read);
  // after a run start in this same invocation, under the claim that start committed the user message with.
  const claimed = await attemptClaim(deps, run, clock);
  let claim: WriterClaim = claimed.claim;
  const emitter = await openRunEmitter(deps, run.runId, run.sessionKey);
  // Superseded by a re-drive: the new attempt streams now, so this one sends nothing more (its retraction included).
  const silenceIfSuperseded = () => void (isSuperseded(signal) && emitter.silence());
  silenceIfSuperseded();
  signal.addEventListener("abort", silenceIfSuperseded, { once: true });
  // Reasoning goes out as `thinking` events only when the caller asked (`streamThinking` at intake).
  // A channel run streams its answer as a preview message edited as it grows (shared/channels/preview.ts).
  const preview = channelPreviewFor({ db: deps.db, log: deps.log, channels: deps.config.channels, hooks: deps.hooks }, run);
  preview?.acknowledge();
  const sink = wrapSink(withPreview(createAttemptSink(emitter, { emitThinking: run.streamThinking === true }), preview));
  try {
    // What the model sees: the latest compaction's summary, then the kept and newer entries (rewrites applied).
    // Read under this attempt's claim: its head (nextSeq) came back with the claim, no second read.
    const history = modelHistory(claimed.entries);
    const session = await wireAttemptSession(deps, {
      run,
      config: prelude.config,
      provider,
      model,
      ref,
      continuation: loop.continuation,
      thinking: thinkingFor(loop.thinking, run),
      transcript: history,
      sink,
      signal,
      commitTurn: async (turn, options) => {
        sink.flushDeltas();
        // Written behind the next model call: that call's text, streamed meanwhile, must stay retractable,
        // so this turn's is marked now (a tool turn's text already was, when its first tool started).
        if (options?.behind) sink.turnCommitted();
        // What looks like the answer gives the claim up in its own commit (no release request after it);
        // a turn after it (a revision, a steering message) resumes the claim if nobody took it since.
        claim = await appendTurn(deps.db, claim, turn, [], { release: isFinalAnswer(turn) }).catch((error: unknown) => {
          // A newer task of this run holds the claim (a re-drive, a retry): it streams now, this one goes quiet.
          if (error instanceof WriterFencedError) emitter.silence();
          throw error;
        });
        if (!options?.behind) sink.turnCommitted();
      },
      shouldYield: () => clock.remainingMs() < YIELD_MARGIN_MS,
    });
    // A retry after a crash that came after the answer was committed: finish from it, never answer twice.
    const recovered = committedAnswer(claim, run.runId);
    const report = recovered ?? await runAttemptSession({
      ...session,
      calibration: calibrationOf(loop),
      strictTurns: loop.strictTurns,
      // Queue mode steer: messages for this session join at each model call, under this claim.
      steering: createSteeringPort(deps.db, run.runId, run.sessionKey, {
        tail: () => ({ lastMessage: claim.lastMessage, lastRunId: claim.lastRunId, nextSeq: claim.nextSeq }),
        commit: (message) => session.commitTurn([message]),
      }, (lane) => noteLaneRead(deps, run.sessionKey, lane)),
    });
    // A completed attempt committed all it streamed; a failed one takes its partial text back.
    sink.retractUncommitted(report.outcome.kind);
    // The log's last writes go out beside the attempt record's (independent items); persist below waits
    // for both, so nothing is decided before every event this attempt emitted is logged. When the same
    // emitter goes on in this invocation (the folded step closes it after the decision, and an inline
    // finalize emits the lifecycle end first), the attempt's last text stays in its batch, within the
    // reservation it was sent on, and is logged in the next write: the lifecycle end's item, or the
    // close's. One put and one subscriber-revision read less; a crash before that write leaves the
    // reservation, which the next writer logs as retractions (docs/protocol.md, "Event log").
    const logged = emitterClosedLater(deps) ? emitter.settle() : emitter.flush();
    logged.catch(() => undefined);
    const record: AttemptRecord = {
      // `v` comes with the report (AttemptResult v1 and AttemptRecord v1 share it).
      runId: run.runId,
      // Numbered over the whole run (iterations restart on a fallback model).
      iteration: loop.attempt,
      model: ref,
      offline: provider.offline,
      ...report,
      // The outer loop compacts in the prelude, right before this attempt: its summary calls are this attempt's usage too.
      compactionCount: report.compactionCount + prelude.compactions,
      ...(prelude.compactionUsage ? { usage: addUsage(report.usage, prelude.compactionUsage) } : {}),
      startedAt,
      endedAt: deps.db.now(),
    };
    recordModelUsage(report.usage, report.costUsd);
    // Written once, with the decision that follows it (the loop decides right after): one write, not
    // a put and an update. A crash before it loses only diagnostics: the retry recovers the
    // committed answer (committedAnswer) and writes the record then.
    const persist = async (decision: Decision) => {
      const [, put] = await Promise.all([logged, putAttempt(deps.db, { ...record, decision, decidedAt: deps.db.now() })]);
      noteFirstAttempt(deps, put);
    };
    return { ...report, persist };
  } finally {
    sink.retractUncommitted("attempt_interrupted");
    await preview?.settle();
    await releaseWriter(deps.db, claim);
    noteWriterReleased(deps, run.runId);
  }
}

/**
 * The claim this attempt writes under: the one the run start of this same
 * invocation kept for it (same session; its lease was sized for this attempt),
 * else a fresh re-entrant claim with the history read in the same request.
 */
async function attemptClaim(deps: RunDeps, run: RunRecord, clock: StepClock): Promise<HeldClaim> {
  const held = takeHeldClaim(deps, run.runId);
  if (held && held.claim.sessionId === run.sessionId) return held;
  if (held) await releaseWriter(deps.db, held.claim);
  return claimWriterWithHistory(deps.db, run.sessionId, run.runId, {
    leaseMs: clock.remainingMs() + ATTEMPT_LEASE_MARGIN_MS,
    acquireTimeoutMs: deps.config.session.writeLockAcquireTimeoutMs,
    // The run is one logical writer across its tasks: a new task of the same run takes the
    // claim at once (a crashed predecessor's live lease must not stall it) and the epoch bump
    // fences that predecessor out.
    allowReentrant: true,
  });
}

/** The attempt's claim outlives the Lambda's deadline by this much (a crash frees it by then). */
export const ATTEMPT_LEASE_MARGIN_MS = 30_000;

/** An assistant message without tool calls, alone: the turn the attempt usually ends on. */
function isFinalAnswer(turn: Message[]): boolean {
  const last = turn[turn.length - 1];
  return turn.length === 1 && last?.role === "assistant" && toolCallsOf(last).length === 0;
}

/** The loop's thinking level (after a downgrade) wins over the run's requested one. */
function thinkingFor(fromLoop: ThinkingLevel | undefined, run: RunRecord): ThinkingLevel | undefined {
  if (fromLoop) return fromLoop;
  return (THINKING_LEVELS as readonly string[]).includes(run.thinking ?? "") ? (run.thinking as ThinkingLevel) : undefined;
}
