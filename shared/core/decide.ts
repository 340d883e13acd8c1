import type { FailureKind } from "./failures";
import {
  LIMITS,
  resetSameModelCounters,
  type AttemptOutcome,
  type Decision,
  type LoopState,
} from "./run-loop";

export interface Step {
  loop: LoopState;
  decision: Decision;
}

type Failure = Extract<AttemptOutcome, { kind: "failed" }>;

/** Failure kinds after which another model may succeed where this one cannot. */
const FAILOVER_KINDS: ReadonlySet<FailureKind> = new Set([
  "rate_limit",
  "overloaded",
  "auth",
  "auth_permanent",
  "billing",
  "model_not_found",
  "timeout",
  "server_error",
]);

/** User-facing texts (our own wording). */
export const USER_ERRORS = {
  retryLimit: (n: number, max: number) => `The agent stopped after ${n} attempts (limit ${max}) without a final answer.`,
  idleBreaker: (n: number) =>
    `The model stopped responding ${n} times in a row without finishing a turn; further attempts were halted to bound cost.`,
  emptyResponse: "The model returned an empty response.",
  reasoningOnly: "The model only produced reasoning and no visible answer.",
  aborted: "The run was aborted.",
} as const;

/**
 * The outer loop's decision after an attempt. Pure: same inputs, same step.
 * Every branch has its own counter and cap; every `attempt` returns to the
 * loop head, where `beforeAttempt` applies the budget again.
 */
export function decideNext(loop: LoopState, outcome: AttemptOutcome): Step {
  switch (outcome.kind) {
    case "completed":
      return finalize(clearContinuation(loop), "ok", "completed");
    case "aborted":
      return finalize(loop, "aborted", "aborted", USER_ERRORS.aborted);
    case "yielded":
      return again({ ...clearContinuation(loop), counters: { ...loop.counters, consecutiveIdleTimeouts: 0 } });
    case "empty_response":
      return continuation(loop, "empty_response", "emptyResponseRetries", LIMITS.emptyResponseRetries, USER_ERRORS.emptyResponse);
    case "reasoning_only":
      return continuation(loop, "reasoning_only", "reasoningOnlyRetries", LIMITS.reasoningOnlyRetries, USER_ERRORS.reasoningOnly);
    case "failed":
      return decideOnFailure(clearContinuation(loop), outcome);
  }
}

/** The loop head: budget check before an attempt starts. Returns the step to take instead, if any. */
export function beforeAttempt(loop: LoopState): Step {
  if (loop.iteration >= loop.maxIterations) {
    const exhausted = USER_ERRORS.retryLimit(loop.iteration, loop.maxIterations);
    return failover(loop, loop.lastFailureKind, "retry_limit", exhausted);
  }
  return { loop: { ...loop, iteration: loop.iteration + 1 }, decision: { action: "attempt" } };
}

function decideOnFailure(loop: LoopState, outcome: Failure): Step {
  const { failure } = outcome;
  const tracked: LoopState = { ...loop, lastFailureKind: failure.kind, counters: trackIdle(loop, outcome) };
  if (failure.kind === "aborted") return finalize(tracked, "aborted", "aborted", USER_ERRORS.aborted);
  if (tracked.counters.consecutiveIdleTimeouts >= LIMITS.consecutiveIdleTimeoutsBeforeBreak) {
    return finalize(tracked, "error", "idle_timeout_breaker", USER_ERRORS.idleBreaker(tracked.counters.consecutiveIdleTimeouts));
  }
  if (failure.kind === "rate_limit" && failure.rateLimitWindow !== "long") {
    const retries = tracked.counters.rateLimitRetries;
    if (retries < LIMITS.sameModelRateLimitRetries) {
      const stepSeconds = LIMITS.rateLimitStepSeconds * (retries + 1);
      const advised = Math.ceil((failure.retryAfterMs ?? 0) / 1000);
      const waitSeconds = Math.min(LIMITS.maxRetryAfterSeconds, Math.max(stepSeconds, advised));
      return { loop: bump(tracked, "rateLimitRetries"), decision: { action: "wait", waitSeconds } };
    }
  }
  if (failure.kind === "timeout" && tracked.counters.idleTimeoutRetries < LIMITS.sameModelIdleTimeoutRetries) {
    return again(bump(tracked, "idleTimeoutRetries"));
  }
  if (isSilentRetryable(failure.kind, failure.retryable) && tracked.counters.silentErrorRetries < LIMITS.silentErrorRetries) {
    return again(bump(tracked, "silentErrorRetries"));
  }
  return failover(tracked, failure.kind, failure.kind, failure.message);
}

/** Overload / server errors / unknown transient failures: resubmit quietly a few times. */
function isSilentRetryable(kind: FailureKind, retryable: boolean): boolean {
  return retryable && (kind === "overloaded" || kind === "server_error" || kind === "unknown");
}

/** Exhaustion: move to the next model in the chain when the reason allows it, else end blocked. */
function failover(loop: LoopState, kind: FailureKind | undefined, reason: string, message: string): Step {
  const hasFallback = loop.modelIndex + 1 < loop.modelCount;
  if (hasFallback && (kind === undefined || FAILOVER_KINDS.has(kind) || reason === "retry_limit")) {
    const next: LoopState = {
      ...loop,
      modelIndex: loop.modelIndex + 1,
      counters: resetSameModelCounters(loop.counters),
      // A fresh model gets a fresh budget for its own attempts.
      iteration: reason === "retry_limit" ? 0 : loop.iteration,
    };
    return again(next);
  }
  return finalize(loop, "error", reason, message);
}

function trackIdle(loop: LoopState, outcome: Failure) {
  const idle = outcome.failure.kind === "timeout";
  // Output tokens alone are not progress: only a completed model turn resets the breaker.
  const consecutive = idle && !outcome.completedModelProgress ? loop.counters.consecutiveIdleTimeouts + 1 : idle ? 0 : loop.counters.consecutiveIdleTimeouts;
  return { ...loop.counters, consecutiveIdleTimeouts: consecutive };
}

function continuation(
  loop: LoopState,
  kind: NonNullable<LoopState["continuation"]>,
  counter: "emptyResponseRetries" | "reasoningOnlyRetries",
  cap: number,
  exhausted: string,
): Step {
  if (loop.counters[counter] < cap) return again({ ...bump(loop, counter), continuation: kind });
  return finalize(clearContinuation(loop), "error", kind, exhausted);
}

function bump(loop: LoopState, counter: keyof LoopState["counters"]): LoopState {
  return { ...loop, counters: { ...loop.counters, [counter]: loop.counters[counter] + 1 } };
}

function clearContinuation(loop: LoopState): LoopState {
  const { continuation: _dropped, ...rest } = loop;
  return rest;
}

function again(loop: LoopState): Step {
  return { loop, decision: { action: "attempt" } };
}

function finalize(loop: LoopState, status: "ok" | "error" | "timeout" | "aborted", reason: string, error?: string): Step {
  return { loop, decision: { action: "finalize", status, reason, ...(error !== undefined ? { error } : {}) } };
}
