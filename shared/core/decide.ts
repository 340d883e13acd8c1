import { historyNearlyFull, ITERATION_EVENTS, START_EVENTS } from "./history-budget";
import { decideOnFailure } from "./decide-failure";
import {
  again,
  bump,
  compaction,
  compactionsLeft,
  finalize,
  giveUp,
  hasFallback,
  nextModel,
  truncation,
  type Step,
} from "./decide-steps";
import type { FailureKind } from "./failures";
import { armGuard } from "./loop-guard";
import { USER_ERRORS } from "./loop-texts";
import { LIMITS, type AttemptOutcome, type LoopCounters, type LoopState } from "./run-loop";

export type { Step } from "./decide-steps";
export { USER_ERRORS } from "./loop-texts";

/**
 * The outer loop's decision after an attempt. Pure: same inputs, same step.
 * Every branch has its own counter and cap; every `attempt` (compaction and
 * truncation included) returns to the loop head, where `beforeAttempt`
 * applies the budget again.
 */
export function decideNext(loop: LoopState, outcome: AttemptOutcome): Step {
  const settled = settleAttempt(loop, outcome);
  switch (outcome.kind) {
    case "completed":
      return finalize(settled, { status: "ok", reason: "completed", livenessState: "working" });
    case "aborted":
      return finalize(settled, { status: "aborted", reason: "aborted", error: USER_ERRORS.aborted, livenessState: "abandoned" });
    case "yielded":
      // A yield is progress cut short by the Lambda limit, not a retry: it gives back its iteration.
      return again({ ...settled, iteration: Math.max(0, loop.iteration - 1), yields: loop.yields + 1, counters: { ...settled.counters, consecutiveIdleTimeouts: 0 } }, "yield");
    case "paused":
      // Waiting for a human or a client is not a retry: it gives back its iteration.
      return { loop: { ...settled, iteration: Math.max(0, loop.iteration - 1) }, decision: { action: "pause", inputId: outcome.inputId, timeoutSeconds: outcome.timeoutSeconds } };
    case "empty_response":
    case "reasoning_only":
    case "missing_assistant":
      return onIncompleteTurn(loop, settled, outcome);
    case "context_precheck":
      return onPrecheck(settled, outcome);
    case "compaction_failed":
      return onCompactionFailed(settled, outcome);
    case "compaction_loop":
      return giveUp(settled, "compaction_loop_persisted", USER_ERRORS.compactionLoop(outcome.toolName, outcome.repeats, LIMITS.postCompactionGuardWindow), "compaction_loop");
    case "budget_exceeded":
      return giveUp(settled, "budget_exceeded", budgetExceededText(outcome), "budget_exceeded");
    case "failed":
      return decideOnFailure(settled, outcome);
  }
}

/**
 * The loop head, before every attempt: the execution's history budget (a long
 * run continues in a fresh execution), then the run's iteration budget, whose
 * exhaustion asks the failover decision (reference §F.49).
 */
export function beforeAttempt(loop: LoopState): Step {
  const { execution } = loop;
  if (execution.iterations >= execution.maxIterations || historyNearlyFull(execution.events, execution.maxEvents)) {
    const generation = execution.generation + 1;
    // The fresh execution starts its own history (its StartExecution and the Attempt that picks the loop up).
    const fresh = { ...execution, generation, iterations: 0, events: START_EVENTS };
    return { loop: { ...loop, execution: fresh }, decision: { action: "continue_as_new", generation } };
  }
  if (loop.iteration >= loop.maxIterations) return onRetryLimit(loop);
  const next = {
    ...loop,
    iteration: loop.iteration + 1,
    attempt: loop.attempt + 1,
    execution: { ...execution, iterations: execution.iterations + 1, events: execution.events + ITERATION_EVENTS },
  };
  return { loop: next, decision: { action: "attempt" } };
}

/** These last reasons never escalate an exhausted budget to the next model (reference §F.49). */
const NO_ESCALATION: ReadonlySet<FailureKind> = new Set(["timeout", "model_not_found", "format", "context_overflow", "aborted"]);

function onRetryLimit(loop: LoopState): Step {
  const kind = loop.lastFailureKind;
  if (hasFallback(loop) && kind !== undefined && !NO_ESCALATION.has(kind)) {
    const fallback = nextModel(loop, kind);
    const head = beforeAttempt(fallback.loop);
    return { ...head, decision: head.decision.action === "attempt" ? { action: "attempt", reason: "fallback_model" } : head.decision, effects: fallback.effects };
  }
  return giveUp(loop, "retry_limit", USER_ERRORS.retryLimit, "retry_limit", { detail: USER_ERRORS.retryLimitDetail(loop.iteration, loop.maxIterations) });
}

/** Per-attempt flags end with the attempt; a same-model rate-limit streak ends with any other outcome. */
function settleAttempt(loop: LoopState, outcome: AttemptOutcome): LoopState {
  const { continuation: _dropped, ...rest } = loop;
  const rateLimited = outcome.kind === "failed" && outcome.failure.kind === "rate_limit";
  const counters: LoopCounters = rateLimited ? loop.counters : { ...loop.counters, rateLimitRetries: 0 };
  return { ...rest, compactedBeforeAttempt: false, counters };
}

type Incomplete = Extract<AttemptOutcome, { kind: "empty_response" | "reasoning_only" | "missing_assistant" }>;

/**
 * No visible answer (reference §G.77): right after a compaction, one
 * compaction continuation; else reasoning-only (2), missing assistant (1,
 * same prompt) and empty response (1) each have their own cap. Never after a
 * side effect: replaying could repeat it.
 */
function onIncompleteTurn(before: LoopState, loop: LoopState, outcome: Incomplete): Step {
  const exhausted = () =>
    finalize(loop, {
      status: "error",
      reason: outcome.kind,
      error: outcome.hadSideEffects ? USER_ERRORS.incompleteTurnAfterTools : USER_ERRORS.incompleteTurn,
      errorKind: "incomplete_turn",
      livenessState: "abandoned",
    });
  if (outcome.hadSideEffects) return exhausted();
  if (before.compactedBeforeAttempt && loop.counters.compactionContinuations < LIMITS.compactionContinuations) {
    return again({ ...bump(loop, "compactionContinuations"), continuation: "compaction", guard: armGuard() }, "compaction_continuation");
  }
  if (outcome.kind === "reasoning_only" && loop.counters.reasoningOnlyRetries < LIMITS.reasoningOnlyRetries) {
    return again({ ...bump(loop, "reasoningOnlyRetries"), continuation: "reasoning_only" }, "reasoning_only_retry");
  }
  if (outcome.kind === "missing_assistant" && loop.counters.missingAssistantRetries < LIMITS.missingAssistantRetries) {
    return again(bump(loop, "missingAssistantRetries"), "missing_assistant_retry");
  }
  if (outcome.kind === "empty_response" && loop.counters.emptyResponseRetries < LIMITS.emptyResponseRetries) {
    return again({ ...bump(loop, "emptyResponseRetries"), continuation: "empty_response" }, "empty_response_retry");
  }
  return exhausted();
}

type Precheck = Extract<AttemptOutcome, { kind: "context_precheck" }>;

/**
 * The attempt's precheck found no room (reference §J.88-90). Truncation alone
 * when it frees enough (once per run; a handled precheck increments no failure
 * counter); otherwise an overflow compaction, followed by truncation when the
 * route says so. A second truncation request becomes a compaction.
 */
function onPrecheck(loop: LoopState, outcome: Precheck): Step {
  if (outcome.route === "truncate_tool_results_only" && !loop.toolResultsTruncated) return truncation(loop, outcome.toolResultMaxChars);
  if (!compactionsLeft(loop, "overflow")) {
    const detail = `Context overflow (precheck): ~${outcome.estimatedTokens} tokens for a prompt budget of ${outcome.promptBudgetTokens}.`;
    return giveUp({ ...loop, lastFailureKind: "context_overflow" }, "context_overflow", USER_ERRORS.contextOverflow, "context_overflow", { detail });
  }
  return compaction(loop, "precheck", { thenTruncate: outcome.route === "compact_then_truncate", tokenCount: outcome.estimatedTokens });
}

/**
 * The context could not be shrunk: truncate oversized tool results once, else
 * give up with OpenClaw's overflow text; `error.kind` is compaction_failure
 * when a summary could not be written in this run, else context_overflow.
 */
function onCompactionFailed(loop: LoopState, outcome: Extract<AttemptOutcome, { kind: "compaction_failed" }>): Step {
  const counted = outcome.stage === "truncation" ? loop : bump(loop, "compactionFailures");
  if (!counted.toolResultsTruncated) return truncation(counted);
  const kind = counted.counters.compactionFailures > 0 ? "compaction_failure" : "context_overflow";
  return giveUp({ ...counted, lastFailureKind: "context_overflow" }, kind, USER_ERRORS.contextOverflow, kind, { detail: outcome.reason });
}

function budgetExceededText(outcome: Extract<AttemptOutcome, { kind: "budget_exceeded" }>): string {
  const amount = (n: number) => (outcome.limit === "cost" ? `$${n.toFixed(4)}` : `${n} tokens`);
  return `The ${outcome.scope}'s ${outcome.limit === "cost" ? "cost" : "token"} budget is used up (${amount(outcome.spent)} of ${amount(outcome.max)}); the agent stopped.`;
}
