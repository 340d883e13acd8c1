import { runAttempt, type AttemptReport } from "../agent/attempt";
import { buildSystemPrompt } from "../agent/system-prompt";
import { toolRegistry } from "../agent/tools/registry";
import { putAttempt } from "../aws/attempts";
import { appendTurn, claimWriter, readTranscript, releaseWriter, type WriterClaim } from "../aws/transcript";
import { getRun, TERMINAL_STATUSES, type RunRecord } from "../aws/runs";
import { RunNotFoundError } from "../aws/errors";
import { beforeAttempt, decideNext } from "../core/decide";
import type { LoopState } from "../core/run-loop";
import { createAttemptSink } from "../events/attempt-sink";
import { RunEventEmitter } from "../events/emitter";
import { modelChain, resolveModel } from "../providers/registry";
import type { RunDeps } from "./deps";
import type { LoopPointer, StepPointer } from "./pointer";
import { emitterDeps } from "./start-run";
import { watchRun } from "./run-watch";

/** Stop starting new model calls when less than this is left before the Lambda deadline. */
export const YIELD_MARGIN_MS = 60_000;

export interface StepClock {
  /** Milliseconds left before the Lambda is killed. */
  remainingMs(): number;
}

/**
 * One iteration of the outer loop: the loop head (budget check), one attempt
 * on the latest committed transcript, then the pure decision on its outcome.
 * Returns pointers and counters only.
 */
export async function attemptStep(deps: RunDeps, input: LoopPointer, clock: StepClock): Promise<StepPointer> {
  const head = beforeAttempt(input.loop);
  if (head.decision.action !== "attempt") return { runId: input.runId, ...head };
  const run = await getRun(deps.db, input.runId);
  if (!run) throw new RunNotFoundError(input.runId);
  if (TERMINAL_STATUSES.has(run.status)) {
    return { runId: run.runId, loop: head.loop, decision: { action: "finalize", status: "aborted", reason: "already_ended" } };
  }
  if (run.abortRequestedAt !== undefined) {
    return { runId: run.runId, loop: head.loop, decision: { action: "finalize", status: "aborted", reason: "abort_requested", error: "The run was aborted." } };
  }
  if (runExpired(run, deps.db.now())) return { runId: run.runId, loop: head.loop, decision: timeoutDecision(run) };
  const watch = watchRun(deps.db, run.runId, runDeadline(run));
  try {
    const report = await executeAttempt(deps, run, head.loop, clock, watch.signal);
    if (watch.reason() === "run_timeout") return { runId: run.runId, loop: head.loop, decision: timeoutDecision(run) };
    return { runId: run.runId, ...decideNext(head.loop, report.outcome) };
  } finally {
    watch.stop();
  }
}

function runDeadline(run: RunRecord): number | undefined {
  return run.timeoutMs > 0 && run.startedAt !== undefined ? run.startedAt + run.timeoutMs : undefined;
}

function runExpired(run: RunRecord, now: number): boolean {
  const deadline = runDeadline(run);
  return deadline !== undefined && now >= deadline;
}

function timeoutDecision(run: RunRecord) {
  const error = `The run exceeded its time budget of ${Math.round(run.timeoutMs / 1000)} s.`;
  return { action: "finalize" as const, status: "timeout" as const, reason: "run_timeout", error };
}

async function executeAttempt(deps: RunDeps, run: RunRecord, loop: LoopState, clock: StepClock, signal: AbortSignal): Promise<AttemptReport> {
  const ref = modelChain(deps.config, run.model)[loop.modelIndex] ?? run.model;
  const { provider, model } = resolveModel(deps.config, ref);
  const startedAt = deps.db.now();
  let claim: WriterClaim = await claimWriter(deps.db, run.sessionId, run.runId, {
    leaseMs: clock.remainingMs() + 30_000,
    acquireTimeoutMs: deps.config.session.writeLockAcquireTimeoutMs,
    // The run is one logical writer across its tasks: a new task of the same run takes the
    // claim at once (a crashed predecessor's live lease must not stall it) and the epoch bump
    // fences that predecessor out.
    allowReentrant: true,
  });
  const emitter = await RunEventEmitter.open(emitterDeps(deps), run.runId, run.sessionKey);
  const sink = createAttemptSink(emitter, { emitThinking: false });
  try {
    const history = (await readTranscript(deps.db, run.sessionId)).map((entry) => entry.message);
    const agent = deps.config.agent;
    const report = await runAttempt({
      provider,
      model,
      system: buildSystemPrompt({ base: agent.systemPrompt, continuation: loop.continuation }),
      history,
      tools: toolRegistry(),
      commitTurn: async (turn) => {
        sink.flushDeltas();
        claim = await appendTurn(deps.db, claim, turn);
      },
      sink,
      toolContext: { runId: run.runId, sessionKey: run.sessionKey, signal },
      idleTimeoutMs: idleTimeoutMs(deps, run),
      maxOutputTokens: agent.maxOutputTokens,
      maxToolRounds: agent.maxToolRounds,
      maxToolResultChars: agent.maxToolResultChars,
      shouldYield: () => clock.remainingMs() < YIELD_MARGIN_MS,
    });
    sink.flushDeltas();
    await emitter.flush();
    await putAttempt(deps.db, {
      v: 1,
      runId: run.runId,
      iteration: loop.iteration,
      model: ref,
      offline: provider.offline,
      ...report,
      startedAt,
      endedAt: deps.db.now(),
    });
    return report;
  } finally {
    sink.flushDeltas();
    await releaseWriter(deps.db, claim);
  }
}

/** The idle watchdog: the configured window, never past what is left of the run's own budget. */
function idleTimeoutMs(deps: RunDeps, run: RunRecord): number | undefined {
  const idle = deps.config.agent.idleTimeoutSeconds * 1000;
  if (idle === 0) return undefined;
  if (run.timeoutMs === 0 || run.startedAt === undefined) return idle;
  return Math.max(1000, Math.min(idle, run.startedAt + run.timeoutMs - deps.db.now()));
}
