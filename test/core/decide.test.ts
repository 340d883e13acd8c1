import { HISTORY_EVENT_LIMIT, FINALIZE_EVENTS, historyNearlyFull, ITERATION_EVENTS, MAX_ITERATION_EVENTS, START_EVENTS } from "../../shared/core/history-budget";
import { describe, expect, it } from "vitest";
import { beforeAttempt, decideNext } from "../../shared/core/decide";
import { USER_ERRORS } from "../../shared/core/loop-texts";
import { LIMITS, LoopStateSchema, maxRunLoopIterations, type AttemptOutcome } from "../../shared/core/run-loop";
import { MAX_TOKEN_SCALE } from "../../shared/core/overflow";
import { failed, iterate, loopOf } from "./loop-helpers";

describe("outer-loop budget (reference §F)", () => {
  it("clamps MAX_RUN_LOOP_ITERATIONS = clamp(24 + max(1, profiles) x 8, 32, 160)", () => {
    expect(maxRunLoopIterations(0)).toBe(32);
    expect(maxRunLoopIterations(1)).toBe(32);
    expect(maxRunLoopIterations(2)).toBe(40);
    expect(maxRunLoopIterations(3)).toBe(48);
    expect(maxRunLoopIterations(17)).toBe(160);
    expect(maxRunLoopIterations(100)).toBe(160);
    expect(loopOf(1, { profileCounts: [3] }).maxIterations).toBe(48);
  });

  it("checks the budget before every iteration: the 32nd runs, the 33rd ends blocked with retry_limit", () => {
    const last = beforeAttempt(loopOf(1, {}, { iteration: 31 }));
    expect(last.decision).toEqual({ action: "attempt" });
    expect(last.loop.iteration).toBe(32);
    const exhausted = beforeAttempt(last.loop);
    expect(exhausted.decision).toMatchObject({
      action: "finalize",
      status: "error",
      reason: "retry_limit",
      errorKind: "retry_limit",
      livenessState: "blocked",
      error: USER_ERRORS.retryLimit,
      detail: "Exceeded retry limit after 32 attempts (max=32).",
    });
  });

  it("every continue consumes one iteration: compaction and truncation included", () => {
    let loop = loopOf(1);
    const compact = iterate(loop, failed("context_overflow"));
    expect(compact.decision.action).toBe("compact");
    loop = compact.loop;
    const truncate = iterate(loop, { kind: "compaction_failed", reason: "x" });
    expect(truncate.decision.action).toBe("truncate");
    expect(truncate.loop.iteration).toBe(2);
    expect(beforeAttempt(truncate.loop).loop.iteration).toBe(3);
  });

  it("exhaustion falls back to the next model when the last reason allows it, with a fresh budget", () => {
    const step = beforeAttempt(loopOf(2, {}, { iteration: 32, lastFailureKind: "overloaded", profileId: "k1" }));
    expect(step.decision).toEqual({ action: "attempt", reason: "fallback_model" });
    expect(step.loop).toMatchObject({ modelIndex: 1, iteration: 1 });
    expect(step.loop.profileId).toBeUndefined();
    expect(step.effects).toEqual([{ type: "profile_failure", profileId: "k1", modelIndex: 0, reason: "overloaded" }]);
  });

  it.each(["timeout", "model_not_found", "format", "context_overflow"] as const)("never escalates exhaustion after %s", (kind) => {
    const step = beforeAttempt(loopOf(2, {}, { iteration: 32, lastFailureKind: kind }));
    expect(step.decision).toMatchObject({ action: "finalize", reason: "retry_limit" });
  });

  it("does not escalate an exhaustion without any failure reason", () => {
    expect(beforeAttempt(loopOf(2, {}, { iteration: 32 })).decision).toMatchObject({ action: "finalize", reason: "retry_limit" });
  });

  it("continues a long run in a fresh execution when this one's iteration share is used up", () => {
    const loop = loopOf(1, { iterationsPerExecution: 2 });
    const one = beforeAttempt(loop);
    const two = beforeAttempt(decideNext(one.loop, { kind: "yielded" }).loop);
    expect(two.decision.action).toBe("attempt");
    const third = beforeAttempt(decideNext(two.loop, { kind: "yielded" }).loop);
    expect(third.decision).toEqual({ action: "continue_as_new", generation: 1 });
    expect(third.loop.execution).toEqual({ generation: 1, iterations: 0, maxIterations: 2, events: START_EVENTS });
    // The fresh execution starts at the loop head with everything else intact.
    expect(beforeAttempt(third.loop).decision.action).toBe("attempt");
  });

  it("counts the history events each iteration adds and continues as new before the 25,000-event limit", () => {
    const loop = loopOf(1);
    expect(loop.execution.events).toBe(START_EVENTS);
    const one = beforeAttempt(loop);
    expect(one.loop.execution.events).toBe(START_EVENTS + ITERATION_EVENTS);
    // Just below the point where one more worst-case iteration and the finalize path might not fit: go on.
    const roomLeft = HISTORY_EVENT_LIMIT - MAX_ITERATION_EVENTS - FINALIZE_EVENTS;
    const near = { ...loop, execution: { ...loop.execution, events: roomLeft } };
    expect(beforeAttempt(near).decision.action).toBe("attempt");
    const full = beforeAttempt({ ...near, execution: { ...near.execution, events: roomLeft + 1 } });
    expect(full.decision).toEqual({ action: "continue_as_new", generation: 1 });
    expect(full.loop.execution).toMatchObject({ generation: 1, iterations: 0, events: START_EVENTS });
    expect(historyNearlyFull(roomLeft + 1)).toBe(true);
  });

  it("numbers attempts over the whole run, across fallbacks", () => {
    const first = iterate(loopOf(2), failed("model_not_found"));
    expect(first.loop.attempt).toBe(1);
    expect(beforeAttempt(first.loop).loop).toMatchObject({ attempt: 2, iteration: 1, modelIndex: 1 });
  });
});

describe("decideNext: terminal and continuation outcomes", () => {
  it("finalizes ok on a completed attempt, liveness working", () => {
    expect(iterate(loopOf(), { kind: "completed" }).decision).toEqual({ action: "finalize", status: "ok", reason: "completed", livenessState: "working" });
  });

  it("ends aborted runs as aborted and abandoned", () => {
    expect(iterate(loopOf(), { kind: "aborted" }).decision).toMatchObject({ action: "finalize", status: "aborted", livenessState: "abandoned" });
    expect(iterate(loopOf(), failed("aborted")).decision).toMatchObject({ action: "finalize", status: "aborted" });
  });

  it("a yield continues, gives its iteration back, and clears any continuation", () => {
    const loop = loopOf(1, {}, { continuation: "empty_response" });
    const step = iterate(loop, { kind: "yielded" });
    expect(step.decision).toEqual({ action: "attempt", reason: "yield" });
    expect(step.loop).toMatchObject({ iteration: 0, yields: 1 });
    expect(step.loop.continuation).toBeUndefined();
  });

  it("reasoning-only turns get 2 continuations, then the incomplete-turn error (abandoned)", () => {
    let loop = loopOf();
    for (let i = 0; i < LIMITS.reasoningOnlyRetries; i += 1) {
      const step = iterate(loop, { kind: "reasoning_only" });
      expect(step.decision).toEqual({ action: "attempt", reason: "reasoning_only_retry" });
      expect(step.loop.continuation).toBe("reasoning_only");
      loop = step.loop;
    }
    expect(iterate(loop, { kind: "reasoning_only" }).decision).toMatchObject({
      action: "finalize",
      reason: "reasoning_only",
      errorKind: "incomplete_turn",
      livenessState: "abandoned",
      error: USER_ERRORS.incompleteTurn,
    });
  });

  it("empty responses get 1 continuation, independent of the reasoning-only cap", () => {
    let loop = loopOf(1, {}, { counters: { ...loopOf().counters, reasoningOnlyRetries: 2 } });
    const first = iterate(loop, { kind: "empty_response" });
    expect(first.decision).toEqual({ action: "attempt", reason: "empty_response_retry" });
    expect(first.loop.continuation).toBe("empty_response");
    loop = first.loop;
    expect(iterate(loop, { kind: "empty_response" }).decision).toMatchObject({ action: "finalize", errorKind: "incomplete_turn" });
  });

  it("a missing assistant message resubmits the same prompt once (no continuation instruction)", () => {
    const first = iterate(loopOf(), { kind: "missing_assistant" });
    expect(first.decision).toEqual({ action: "attempt", reason: "missing_assistant_retry" });
    expect(first.loop.continuation).toBeUndefined();
    expect(iterate(first.loop, { kind: "missing_assistant" }).decision).toMatchObject({ action: "finalize", errorKind: "incomplete_turn" });
  });

  it("never replays a turn after a side effect; the error says tools may have run", () => {
    expect(iterate(loopOf(), { kind: "empty_response", hadSideEffects: true }).decision).toMatchObject({
      action: "finalize",
      error: USER_ERRORS.incompleteTurnAfterTools,
    });
  });

  it("a post-compaction attempt without an answer gets one compaction continuation, which re-arms the loop guard", () => {
    const compacted = iterate(loopOf(), failed("context_overflow")).loop;
    expect(compacted.compactedBeforeAttempt).toBe(true);
    const retry = iterate(compacted, { kind: "empty_response" });
    expect(retry.decision).toEqual({ action: "attempt", reason: "compaction_continuation" });
    expect(retry.loop).toMatchObject({ continuation: "compaction", compactedBeforeAttempt: false, guard: { remaining: 3, seen: {} } });
    expect(retry.loop.counters.compactionContinuations).toBe(1);
    // Cap 1: the next empty answer falls through to the empty-response retry.
    const next = iterate({ ...retry.loop, compactedBeforeAttempt: true }, { kind: "empty_response" });
    expect(next.decision).toEqual({ action: "attempt", reason: "empty_response_retry" });
  });

  it("ends a run whose budget is used up", () => {
    const step = iterate(loopOf(), { kind: "budget_exceeded", scope: "run", limit: "tokens", spent: 1200, max: 1000 });
    expect(step.decision).toMatchObject({ action: "finalize", status: "error", errorKind: "budget_exceeded" });
  });
});

describe("decideNext: context recovery (reference §G.55-59, §J)", () => {
  it("overflow compacts up to 3 times, then truncates once, then ends blocked with OpenClaw's text and context_overflow", () => {
    let loop = loopOf();
    for (let i = 1; i <= LIMITS.overflowCompactions; i += 1) {
      const step = iterate(loop, failed("context_overflow", {}, { promptTokens: 210_000 }));
      expect(step.decision).toEqual({ action: "compact", trigger: "overflow", thenTruncate: false, tokenCount: 210_000 });
      expect(step.loop.counters.overflowCompactions).toBe(i);
      expect(step.loop.guard).toEqual({ remaining: 3, seen: {} });
      expect(step.loop.continuation).toBe("compaction");
      loop = step.loop;
    }
    const truncate = iterate(loop, failed("context_overflow"));
    expect(truncate.decision).toEqual({ action: "truncate" });
    expect(iterate(truncate.loop, failed("context_overflow")).decision).toMatchObject({
      action: "finalize",
      reason: "context_overflow",
      errorKind: "context_overflow",
      livenessState: "blocked",
      error: "Context overflow: prompt too large for the model. Try /reset (or /new) to start a fresh session, or use a larger-context model.",
    });
    // Nothing to truncate after the last compaction: the same give-up, one attempt earlier.
    expect(iterate(loop, { kind: "compaction_failed", reason: "no tool result", stage: "truncation" }).decision).toEqual({ action: "truncate" });
    expect(iterate(truncate.loop, { kind: "compaction_failed", reason: "no tool result", stage: "truncation" }).decision).toMatchObject({
      action: "finalize",
      errorKind: "context_overflow",
      error: USER_ERRORS.contextOverflow,
    });
  });

  it("plans with the provider's numbers: its count, its window, and our estimate scaled for the rest of the run", () => {
    // "This model's maximum context length is 128000 tokens. However, your messages resulted in 130532 tokens."
    const overflow = failed("context_overflow", { overflow: { maxContextTokens: 128_000, promptTokens: 130_532 } }, { estimatedPromptTokens: 40_000, contextTokens: 200_000 });
    const step = iterate(loopOf(2), overflow);
    expect(step.decision).toEqual({ action: "compact", trigger: "overflow", thenTruncate: false, tokenCount: 130_532 });
    expect(step.loop.calibration).toEqual({ "0": { tokenScale: 3.263, contextTokens: 128_000 } });
    // A later overflow without numbers sizes with the scaled estimate, not the raw one.
    const later = iterate(step.loop, failed("context_overflow", {}, { estimatedPromptTokens: 1000 }));
    expect(later.decision).toMatchObject({ tokenCount: 3263 });
    // Calibration only tightens, and belongs to the model it was learnt on.
    const looser = iterate(step.loop, failed("context_overflow", { overflow: { maxContextTokens: 200_000, promptTokens: 2100 } }, { estimatedPromptTokens: 2000 }));
    expect(looser.loop.calibration["0"]).toEqual({ tokenScale: 3.263, contextTokens: 128_000 });
    // A ratio no tokenizer explains (the count is mostly what compaction cannot shrink) is capped.
    const extreme = iterate(loopOf(), failed("context_overflow", { overflow: { promptTokens: 130_532 } }, { estimatedPromptTokens: 300 }));
    expect(extreme.loop.calibration["0"]).toEqual({ tokenScale: MAX_TOKEN_SCALE });
    expect(LoopStateSchema.parse(step.loop).calibration).toEqual(step.loop.calibration);
  });

  it("without a provider count: the estimate, else budget + 1 (reference §G.55)", () => {
    expect(iterate(loopOf(), failed("context_overflow", {}, { estimatedPromptTokens: 5000 })).decision).toMatchObject({ tokenCount: 5000 });
    expect(iterate(loopOf(), failed("context_overflow", {}, { contextTokens: 32_000 })).decision).toMatchObject({ tokenCount: 32_001 });
    const windowOnly = failed("context_overflow", { overflow: { maxContextTokens: 8192 } }, { contextTokens: 32_000 });
    expect(iterate(loopOf(), windowOnly).decision).toMatchObject({ tokenCount: 8193 });
  });

  it("gives up as compaction_failure when a summary could not be written in the run", () => {
    const first = iterate(loopOf(), { kind: "compaction_failed", reason: "summary call failed (timeout)", stage: "compaction" });
    expect(first.loop.counters.compactionFailures).toBe(1);
    const exhausted = { ...first.loop, counters: { ...first.loop.counters, overflowCompactions: 3 } };
    expect(iterate(exhausted, failed("context_overflow")).decision).toMatchObject({ errorKind: "compaction_failure", error: USER_ERRORS.contextOverflow });
  });

  it("never fails over to another model on overflow", () => {
    const loop = loopOf(3, { profileCounts: [2, 1, 1] }, { counters: { ...loopOf().counters, overflowCompactions: 3 }, toolResultsTruncated: true });
    expect(iterate(loop, failed("context_overflow"), "a").decision.action).toBe("finalize");
  });

  const precheck = (route: "compact_only" | "truncate_tool_results_only" | "compact_then_truncate"): AttemptOutcome => ({
    kind: "context_precheck",
    route,
    estimatedTokens: 150_000,
    promptBudgetTokens: 120_000,
    overflowTokens: 30_000,
    toolResultMaxChars: 16_000,
  });

  it("precheck truncate_tool_results_only truncates once without any failure counter, then compacts", () => {
    const first = iterate(loopOf(), precheck("truncate_tool_results_only"));
    expect(first.decision).toEqual({ action: "truncate", maxChars: 16_000 });
    expect(first.loop.toolResultsTruncated).toBe(true);
    expect(first.loop.counters).toEqual(loopOf().counters);
    const second = iterate(first.loop, precheck("truncate_tool_results_only"));
    expect(second.decision).toEqual({ action: "compact", trigger: "precheck", thenTruncate: false, tokenCount: 150_000 });
  });

  it("precheck compact_only compacts; compact_then_truncate also truncates (once per run)", () => {
    expect(iterate(loopOf(), precheck("compact_only")).decision).toMatchObject({ action: "compact", trigger: "precheck", thenTruncate: false });
    const both = iterate(loopOf(), precheck("compact_then_truncate"));
    expect(both.decision).toMatchObject({ action: "compact", thenTruncate: true });
    expect(both.loop.toolResultsTruncated).toBe(true);
    expect(iterate(both.loop, precheck("compact_then_truncate")).decision).toMatchObject({ action: "compact", thenTruncate: false });
  });

  it("precheck compactions share the overflow cap", () => {
    const loop = loopOf(1, {}, { counters: { ...loopOf().counters, overflowCompactions: 3 } });
    expect(iterate(loop, precheck("compact_only")).decision).toMatchObject({ action: "finalize", errorKind: "context_overflow" });
  });

  it("a failed compaction falls back to truncation once, then gives up as compaction_failure", () => {
    const first = iterate(loopOf(), { kind: "compaction_failed", reason: "summary timed out", stage: "compaction" });
    expect(first.decision).toEqual({ action: "truncate" });
    const second = iterate(first.loop, { kind: "compaction_failed", reason: "nothing to truncate", stage: "truncation" });
    expect(second.decision).toMatchObject({ action: "finalize", errorKind: "compaction_failure", detail: "nothing to truncate", error: USER_ERRORS.compactionFailure });
  });

  it("the post-compaction loop guard ends the run", () => {
    const step = iterate(loopOf(), { kind: "compaction_loop", toolName: "read_file", repeats: 3 });
    expect(step.decision).toMatchObject({ action: "finalize", status: "error", reason: "compaction_loop_persisted", errorKind: "compaction_loop" });
    expect((step.decision as { error: string }).error).toContain("read_file");
  });
});

describe("loop state schema", () => {
  it("parses a frozen v1 state written before the newer fields existed", () => {
    const frozenV1 = {
      v: 1,
      iteration: 3,
      maxIterations: 32,
      modelIndex: 0,
      modelCount: 2,
      counters: { rateLimitRetries: 1, silentErrorRetries: 0, idleTimeoutRetries: 0, consecutiveIdleTimeouts: 2, emptyResponseRetries: 0, reasoningOnlyRetries: 0, missingAssistantRetries: 0 },
      continuation: "empty_response",
      lastFailureKind: "rate_limit",
    };
    const parsed = LoopStateSchema.parse(frozenV1);
    expect(parsed).toMatchObject({ iteration: 3, profileCounts: [], triedProfiles: [], yields: 0, attempt: 0, toolResultsTruncated: false });
    expect(parsed.counters).toMatchObject({ overflowCompactions: 0, timeoutCompactions: 0, rateLimitRotations: 0 });
    expect(parsed.execution).toEqual({ generation: 0, iterations: 0, maxIterations: LIMITS.iterationsPerExecution, events: 0 });
    expect(beforeAttempt(parsed).decision.action).toBe("attempt");
  });

  it("stays small: a busy loop state is far below the 256 KB Step Functions limit", () => {
    const busy = { ...loopOf(4, { profileCounts: [5, 5, 5, 5] }), triedProfiles: ["a", "b", "c", "d"], guard: { remaining: 2, seen: { "x|abc|def": 1 } } };
    expect(Buffer.byteLength(JSON.stringify(busy))).toBeLessThan(2048);
  });
});
