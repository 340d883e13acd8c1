import { recordAttemptDecision } from "../aws/attempt-decisions";
import { recordAttemptMetrics } from "../observability/run-metrics";
import { getRun, markResumed, TERMINAL_STATUSES, type RunRecord } from "../aws/runs";
import { RunNotFoundError, RunSupersededError } from "../aws/errors";
import type { AttemptSink } from "../agent/attempt";
import { beforeAttempt, decideNext } from "../core/decide";
import type { Step } from "../core/decide-steps";
import type { AttemptOutcome, Decision, FinalizeDecision, LoopState } from "../core/run-loop";
import { prepareAttempt, type Prelude } from "./attempt-prelude";
import type { RunDeps } from "./deps";
import { GuardMonitor } from "./guard-monitor";
import { applyEffects, continueAsNew, withPromptFacts } from "./loop-effects";
import type { StepPointer } from "./pointer";
import { ABORT_POLL_MS, watchRun, type RunWatch } from "./run-watch";
import { startHeartbeat } from "./heartbeat";
import { heartbeatIntervalMs } from "../config/lanes-config";
import { noteRunForFinalize, takeRunRecord } from "./invocation-memo";

/** An attempt whose record is written once the loop has decided what follows it (record and decision in one write). */
export interface PersistableAttempt {
  persist?: (decision: Decision) => Promise<void>;
}

/** Runs one attempt; the step supplies it (shared/run/attempt-step.ts executeAttempt). */
export type AttemptRunner = (
  run: RunRecord,
  prelude: Prelude,
  signal: AbortSignal,
  wrapSink: <S extends AttemptSink>(sink: S) => S,
) => Promise<{ outcome: AttemptOutcome; systemPromptChars?: number } & PersistableAttempt>;

export interface IterationInput {
  runId: string;
  loop: LoopState;
  /** The decision that led here (a compaction or truncation to carry out first). */
  decision?: Decision;
}

/**
 * One iteration of the outer loop, as the Attempt task runs it: the loop head
 * (execution history and iteration budgets), the prelude (auth profile,
 * compaction / truncation), one attempt on the latest committed transcript,
 * then the pure decision and its side effects. Returns pointers and counters only.
 */
export async function runLoopIteration(deps: RunDeps, input: IterationInput, runAttempt: AttemptRunner): Promise<StepPointer> {
  // StartRun already ended the run (a before_agent_run hook blocked it): no attempt, no retry.
  if (input.decision?.action === "finalize") return { runId: input.runId, loop: input.loop, decision: input.decision };
  let loop = input.loop;
  let previous = input.decision;
  for (;;) {
    const head = beforeAttempt(loop);
    if (head.decision.action === "continue_as_new") {
      await continueAsNew(deps, input.runId, head.loop);
      return pointer(input.runId, head);
    }
    if (head.decision.action !== "attempt") return pointer(input.runId, head);
    // The run start of this same invocation answered the record with its last write: no read.
    const run = takeRunRecord(deps, input.runId) ?? await getRun(deps.db, input.runId);
    if (!run) throw new RunNotFoundError(input.runId);
    deps.log.appendKeys?.({ sessionKey: run.sessionKey, ...(run.executionArn ? { executionArn: run.executionArn } : {}) });
    // Back from PauseForInput (answered or timed out): the run works again.
    if (run.status === "paused") await markResumed(deps.db, run.runId);
    const early = endedBeforeAttempt(run, deps.db.now());
    if (early) return { runId: run.runId, loop: head.loop, decision: early };
    // Under the generation it started in: a re-drive after its execution died supersedes this attempt.
    const watch = watchRun(deps.db, run.runId, runDeadline(run), ABORT_POLL_MS, run.redriveGeneration ?? 0);
    const heartbeat = startHeartbeat(deps.db, run.runId, heartbeatIntervalMs(deps.config.diagnostics), Math.max(run.startedAt ?? 0, run.heartbeatAt ?? 0));
    try {
      const prepared = await prepareAttempt(deps, run, head.loop, previous, watch.signal);
      if ("skip" in prepared) {
        // Every profile of this model cools down: move on without calling it (same task, no extra
        // transition), and without using up an attempt number (attempts are numbered as they ran).
        await applyEffects(deps, run, prepared.skip);
        loop = unnumbered(prepared.skip.loop);
        previous = undefined;
        continue;
      }
      const step = await attemptAndDecide(deps, run, prepared.prelude, watch, runAttempt);
      if (watch.reason() === "run_timeout") return { runId: run.runId, loop: head.loop, decision: timeoutDecision(run) };
      return pointer(run.runId, step);
    } finally {
      heartbeat.stop();
      watch.stop();
    }
  }
}

async function attemptAndDecide(deps: RunDeps, run: RunRecord, prelude: Prelude, watch: RunWatch, runAttempt: AttemptRunner): Promise<Step> {
  if (prelude.outcome) {
    // The context step failed before any model call: no attempt ran, so none is numbered.
    const step = decideNext(prelude.loop, prelude.outcome);
    return { ...step, loop: unnumbered(step.loop) };
  }
  const monitor = new GuardMonitor(prelude.loop.guard);
  const report = await runAttempt(run, prelude, AbortSignal.any([watch.signal, monitor.signal]), (sink) => monitor.wrap(sink));
  // Its execution died and the sweeper re-drove the run meanwhile: deciding or finalizing here would
  // race the re-drive's attempt (which owns the run now); the dead execution takes no answer anyway.
  if (watch.reason() === "superseded") throw new RunSupersededError(run.runId, (run.redriveGeneration ?? 0) + 1);
  const tripped = monitor.tripped;
  const outcome: AttemptOutcome = tripped ? { kind: "compaction_loop", ...tripped } : await withPromptFacts(deps, run, prelude, report.outcome, report.systemPromptChars);
  const step = decideNext({ ...prelude.loop, guard: monitor.guard }, outcome);
  if (step.decision.action === "finalize") noteRunForFinalize(deps, run);
  // The loop path a console reads back: this attempt's record gets the decision that followed it.
  if (report.persist) await report.persist(step.decision);
  else await recordAttemptDecision(deps.db, run.runId, prelude.loop.attempt, step.decision);
  recordAttemptMetrics(outcome, step.decision);
  await applyEffects(deps, run, step, { prelude, outcome });
  return step;
}

/** Gives back the attempt number the loop head took for an attempt that did not run. */
function unnumbered(loop: LoopState): LoopState {
  return { ...loop, attempt: Math.max(0, loop.attempt - 1) };
}

function pointer(runId: string, step: Step): StepPointer {
  return { runId, loop: step.loop, decision: step.decision };
}

function endedBeforeAttempt(run: RunRecord, now: number): FinalizeDecision | undefined {
  if (TERMINAL_STATUSES.has(run.status)) return { action: "finalize", status: "aborted", reason: "already_ended" };
  if (run.abortRequestedAt !== undefined) {
    return { action: "finalize", status: "aborted", reason: "abort_requested", error: "The run was aborted.", livenessState: "abandoned" };
  }
  const deadline = runDeadline(run);
  if (deadline !== undefined && now >= deadline) return timeoutDecision(run);
  return undefined;
}

export function runDeadline(run: RunRecord): number | undefined {
  return run.timeoutMs > 0 && run.startedAt !== undefined ? run.startedAt + run.timeoutMs : undefined;
}

function timeoutDecision(run: RunRecord): FinalizeDecision {
  const error = `The run exceeded its time budget of ${Math.round(run.timeoutMs / 1000)} s.`;
  return { action: "finalize", status: "timeout", reason: "run_timeout", error, errorKind: "timeout", livenessState: "blocked" };
}
