import { describe, expect, it } from "vitest";
import { beforeAttempt, decideNext } from "../../shared/core/decide";
import { initialLoopState, LIMITS, maxRunLoopIterations, type AttemptOutcome, type LoopState } from "../../shared/core/run-loop";
import type { FailureKind } from "../../shared/core/failures";

const failed = (kind: FailureKind, extra: Partial<Extract<AttemptOutcome, { kind: "failed" }>["failure"]> = {}, progress = false): AttemptOutcome => ({
  kind: "failed",
  failure: { kind, message: `${kind} happened`, retryable: true, responseStarted: false, ...extra },
  completedModelProgress: progress,
});

/** Runs the loop head then the decision, as the Attempt task does. */
function iterate(loop: LoopState, outcome: AttemptOutcome) {
  const head = beforeAttempt(loop);
  expect(head.decision.action).toBe("attempt");
  return decideNext(head.loop, outcome);
}

describe("outer-loop budget", () => {
  it("clamps MAX_RUN_LOOP_ITERATIONS to [32, 160] from the profile count", () => {
    expect(maxRunLoopIterations(0)).toBe(32);
    expect(maxRunLoopIterations(1)).toBe(32);
    expect(maxRunLoopIterations(2)).toBe(40);
    expect(maxRunLoopIterations(17)).toBe(160);
    expect(maxRunLoopIterations(100)).toBe(160);
  });

  it("each loop head consumes one iteration and blocks with a clear error at the cap", () => {
    let loop = { ...initialLoopState(1), iteration: 31 };
    const head = beforeAttempt(loop);
    expect(head.decision).toEqual({ action: "attempt" });
    loop = head.loop;
    expect(loop.iteration).toBe(32);
    const exhausted = beforeAttempt(loop);
    expect(exhausted.decision).toMatchObject({ action: "finalize", status: "error", reason: "retry_limit" });
    expect((exhausted.decision as { error: string }).error).toContain("32");
  });

  it("exhaustion falls back to the next model when one is configured", () => {
    const loop = { ...initialLoopState(2), iteration: 32, lastFailureKind: "overloaded" as const };
    const step = beforeAttempt(loop);
    expect(step.decision).toEqual({ action: "attempt" });
    expect(step.loop.modelIndex).toBe(1);
  });
});

describe("decideNext", () => {
  it("finalizes ok on a completed attempt", () => {
    expect(iterate(initialLoopState(1), { kind: "completed" }).decision).toEqual({ action: "finalize", status: "ok", reason: "completed" });
  });

  it("waits 10 s, 20 s, 30 s for short-window rate limits, then gives up on this model", () => {
    let loop = initialLoopState(1);
    const waits: number[] = [];
    for (let i = 0; i < LIMITS.sameModelRateLimitRetries; i += 1) {
      const step = iterate(loop, failed("rate_limit", { rateLimitWindow: "short" }));
      expect(step.decision.action).toBe("wait");
      waits.push((step.decision as { waitSeconds: number }).waitSeconds);
      loop = step.loop;
    }
    expect(waits).toEqual([10, 20, 30]);
    const last = iterate(loop, failed("rate_limit", { rateLimitWindow: "short" }));
    expect(last.decision).toMatchObject({ action: "finalize", status: "error", reason: "rate_limit" });
  });

  it("honours a longer Retry-After but never waits more than 60 s", () => {
    const step = iterate(initialLoopState(1), failed("rate_limit", { retryAfterMs: 45_000 }));
    expect(step.decision).toEqual({ action: "wait", waitSeconds: 45 });
    const capped = iterate(initialLoopState(1), failed("rate_limit", { retryAfterMs: 600_000, rateLimitWindow: "short" }));
    expect(capped.decision).toEqual({ action: "wait", waitSeconds: 60 });
  });

  it("does not retry long-window rate limits on the same model but fails over", () => {
    const step = iterate(initialLoopState(2), failed("rate_limit", { rateLimitWindow: "long" }));
    expect(step.decision).toEqual({ action: "attempt" });
    expect(step.loop.modelIndex).toBe(1);
  });

  it("trips the idle-timeout breaker after 5 consecutive idle timeouts across model switches", () => {
    let loop = initialLoopState(10);
    let step = iterate(loop, failed("timeout"));
    for (let i = 1; i < LIMITS.consecutiveIdleTimeoutsBeforeBreak; i += 1) {
      loop = step.loop;
      step = iterate(loop, failed("timeout"));
    }
    expect(step.loop.counters.consecutiveIdleTimeouts).toBe(5);
    expect(step.decision).toMatchObject({ action: "finalize", status: "error", reason: "idle_timeout_breaker" });
    expect(step.loop.modelIndex).toBeGreaterThan(0);
  });

  it("resets the idle breaker only on completed model progress", () => {
    const loop = { ...initialLoopState(3), counters: { ...initialLoopState(3).counters, consecutiveIdleTimeouts: 4 } };
    const withProgress = iterate(loop, failed("timeout", {}, true));
    expect(withProgress.loop.counters.consecutiveIdleTimeouts).toBe(0);
  });

  it("gives empty responses one continuation and reasoning-only turns two", () => {
    const first = iterate(initialLoopState(1), { kind: "empty_response" });
    expect(first.decision).toEqual({ action: "attempt" });
    expect(first.loop.continuation).toBe("empty_response");
    const second = iterate(first.loop, { kind: "empty_response" });
    expect(second.decision).toMatchObject({ action: "finalize", status: "error", reason: "empty_response" });

    let loop = initialLoopState(1);
    for (let i = 0; i < 2; i += 1) {
      const step = iterate(loop, { kind: "reasoning_only" });
      expect(step.decision.action).toBe("attempt");
      loop = step.loop;
    }
    expect(iterate(loop, { kind: "reasoning_only" }).decision).toMatchObject({ action: "finalize", reason: "reasoning_only" });
  });

  it("retries overload silently three times, then ends blocked without a fallback", () => {
    let loop = initialLoopState(1);
    for (let i = 0; i < LIMITS.silentErrorRetries; i += 1) {
      const step = iterate(loop, failed("overloaded"));
      expect(step.decision).toEqual({ action: "attempt" });
      loop = step.loop;
    }
    expect(iterate(loop, failed("overloaded")).decision).toMatchObject({ action: "finalize", status: "error", error: "overloaded happened" });
  });

  it("never retries a non-retryable format error on the same model", () => {
    const step = iterate(initialLoopState(1), failed("format", { retryable: false }));
    expect(step.decision).toMatchObject({ action: "finalize", status: "error", reason: "format" });
  });

  it("ends aborted runs as aborted", () => {
    expect(iterate(initialLoopState(1), { kind: "aborted" }).decision).toMatchObject({ action: "finalize", status: "aborted" });
  });

  it("keeps going after a yield and clears any continuation", () => {
    const loop = { ...initialLoopState(1), continuation: "empty_response" as const };
    const step = iterate(loop, { kind: "yielded" });
    expect(step.decision).toEqual({ action: "attempt" });
    expect(step.loop.continuation).toBeUndefined();
  });
});
