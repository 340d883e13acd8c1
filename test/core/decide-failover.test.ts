import { describe, expect, it } from "vitest";
import { decideNext } from "../../shared/core/decide";
import { USER_ERRORS } from "../../shared/core/loop-texts";
import { LIMITS, type AttemptOutcome } from "../../shared/core/run-loop";
import { pickFallbackThinkingLevel } from "../../shared/core/thinking";
import { classifySignal } from "../../shared/providers/classify";
import { acceptedThinkingLevels } from "../../shared/providers/failure-details";
import { failed, iterate, loopOf, repeatUntilSettled } from "./loop-helpers";

const actions = (steps: { decision: { action: string; reason?: string } }[]) => steps.map((s) => `${s.decision.action}:${s.decision.reason ?? ""}`);

describe("rate limits (reference §G.67-68)", () => {
  it("waits 10 s, 20 s, 30 s as Wait states for short-window limits, then surfaces", () => {
    const steps = repeatUntilSettled(loopOf(), failed("rate_limit", { rateLimitWindow: "short" }));
    expect(steps.slice(0, 3).map((s) => s.decision)).toEqual([
      { action: "wait", waitSeconds: 10, reason: "same_model_rate_limit" },
      { action: "wait", waitSeconds: 20, reason: "same_model_rate_limit" },
      { action: "wait", waitSeconds: 30, reason: "same_model_rate_limit" },
    ]);
    expect(steps[3].decision).toMatchObject({ action: "finalize", reason: "rate_limit", errorKind: "rate_limit", error: USER_ERRORS.rateLimited });
    expect(steps).toHaveLength(4);
  });

  it("honours a longer Retry-After, never more than 60 s", () => {
    expect(iterate(loopOf(), failed("rate_limit", { retryAfterMs: 45_000 })).decision).toMatchObject({ action: "wait", waitSeconds: 45 });
    expect(iterate(loopOf(), failed("rate_limit", { retryAfterMs: 600_000 })).decision).toMatchObject({ action: "wait", waitSeconds: 60 });
    expect(iterate(loopOf(), failed("rate_limit", { retryAfterMs: 1_200 })).decision).toMatchObject({ action: "wait", waitSeconds: 10 });
  });

  it("long-window limits (daily quota) skip the same-model retries and fail over", () => {
    const step = iterate(loopOf(2), failed("rate_limit", { rateLimitWindow: "long" }));
    expect(step.decision).toEqual({ action: "attempt", reason: "fallback_model" });
    expect(step.loop.modelIndex).toBe(1);
  });

  it.each([
    "Rate limit reached for gpt-4o-mini in organization org-x on requests per day (RPD): Limit 200, Used 200, Requested 1.",
    "Your organization has reached its weekly limit.",
    "You have reached your monthly usage limit.",
  ])("the adapter reads a long window from the wording (no Retry-After): %s", (message) => {
    const failure = classifySignal({ status: 429, type: "requests", message }, false);
    expect(failure).toMatchObject({ kind: "rate_limit", rateLimitWindow: "long" });
    expect(iterate(loopOf(), { kind: "failed", failure, completedModelProgress: false }).decision).toMatchObject({ action: "finalize" });
  });

  it("then rotates the auth profile once (cooling the limited one), then falls back to the next model", () => {
    const profileFor = (loop: { triedProfiles: string[] }) => ["k1", "k2", "k3"][loop.triedProfiles.length];
    const steps = repeatUntilSettled(loopOf(2, { profileCounts: [3, 1] }), failed("rate_limit"), 20, profileFor);
    expect(actions(steps).slice(0, 6)).toEqual([
      "wait:same_model_rate_limit",
      "wait:same_model_rate_limit",
      "wait:same_model_rate_limit",
      "attempt:rotate_profile",
      // The rotated-to key gets no same-model waits of its own (rotation cap 1): straight to the fallback.
      "attempt:fallback_model",
      "wait:same_model_rate_limit",
    ]);
    expect(steps[3].effects).toEqual([{ type: "profile_failure", profileId: "k1", modelIndex: 0, reason: "rate_limit" }]);
    expect(steps[3].loop.triedProfiles).toEqual(["k1"]);
    expect(steps[4].effects).toEqual([{ type: "profile_failure", profileId: "k2", modelIndex: 0, reason: "rate_limit" }]);
  });

  it("keeps rotating past the cap when no fallback model exists", () => {
    const profileFor = (loop: { triedProfiles: string[] }) => ["k1", "k2", "k3"][loop.triedProfiles.length];
    const steps = repeatUntilSettled(loopOf(1, { profileCounts: [3] }), failed("rate_limit", { rateLimitWindow: "long" }), 20, profileFor);
    expect(actions(steps)).toEqual(["attempt:rotate_profile", "attempt:rotate_profile", "finalize:rate_limit"]);
  });

  it("resets the same-model streak after any other outcome", () => {
    const waited = iterate(loopOf(), failed("rate_limit"));
    const other = iterate(waited.loop, failed("server_error"));
    expect(other.loop.counters.rateLimitRetries).toBe(0);
    expect(iterate(other.loop, failed("rate_limit")).decision).toMatchObject({ action: "wait", waitSeconds: 10 });
  });
});

describe("overload (reference §G.69, §G.76)", () => {
  it("rotates once, then falls back", () => {
    const profileFor = (loop: { triedProfiles: string[]; modelIndex: number }) => (loop.modelIndex === 0 ? ["a", "b", "c"][loop.triedProfiles.length] : "z");
    const steps = repeatUntilSettled(loopOf(2, { profileCounts: [3, 1] }), failed("overloaded"), 3, profileFor);
    expect(actions(steps).slice(0, 2)).toEqual(["attempt:rotate_profile", "attempt:fallback_model"]);
  });

  it("when every candidate is overloaded, retries the whole chain up to 10 times with 3 -> 30 s waits, then surfaces", () => {
    const steps = repeatUntilSettled(loopOf(), failed("overloaded"), 30);
    const waits = steps.filter((s) => s.decision.action === "wait").map((s) => (s.decision as { waitSeconds: number }).waitSeconds);
    expect(waits).toEqual([3, 5, 10, 20, 30, 30, 30, 30, 30, 30]);
    expect(steps[steps.length - 1].decision).toMatchObject({ action: "finalize", reason: "overloaded", error: USER_ERRORS.overloaded });
  });

  it("restarts the chain at the primary model", () => {
    const atFallback = loopOf(2, {}, { modelIndex: 1 });
    const step = iterate(atFallback, failed("overloaded"));
    expect(step.decision).toMatchObject({ action: "wait", reason: "overload_chain_retry" });
    expect(step.loop.modelIndex).toBe(0);
  });

  it("does not retry the chain once output had started", () => {
    expect(iterate(loopOf(), failed("overloaded", { responseStarted: true })).decision.action).toBe("finalize");
  });
});

describe("auth, billing, model not found (reference §2.1)", () => {
  it.each(["auth", "auth_permanent", "billing"] as const)("%s rotates through every profile, then falls back, then surfaces", (kind) => {
    const profileFor = (loop: { triedProfiles: string[]; modelIndex: number }) => (loop.modelIndex === 0 ? ["a", "b"][loop.triedProfiles.length] : "only");
    const steps = repeatUntilSettled(loopOf(2, { profileCounts: [2, 1] }), failed(kind, { message: "denied" }), 10, profileFor);
    expect(actions(steps)).toEqual(["attempt:rotate_profile", "attempt:fallback_model", `finalize:${kind}`]);
    // The provider's message stays in `detail` (logged); the caller reads our text.
    expect(steps[2].decision).toMatchObject({ error: USER_ERRORS.providerFailure(kind), detail: "denied", errorKind: kind, livenessState: "blocked" });
    expect(steps[2].effects).toEqual([{ type: "profile_failure", profileId: "only", modelIndex: 1, reason: kind }]);
  });

  it("an auth or billing failure follows the key across models for the rest of the run; other failures do not", () => {
    const first = iterate(loopOf(2, { profileCounts: [2, 2] }), failed("auth"), "key-a");
    expect(first.loop.failedProfiles).toEqual([{ profileId: "key-a", modelIndex: 0, reason: "auth" }]);
    const second = iterate(first.loop, failed("overloaded"), "key-b");
    expect(second.decision).toEqual({ action: "attempt", reason: "fallback_model" });
    // The fallback model starts with no tried profiles, but remembers the key that failed authentication.
    expect(second.loop).toMatchObject({ modelIndex: 1, triedProfiles: [], failedProfiles: [{ profileId: "key-a", modelIndex: 0 }] });
    expect(iterate(loopOf(), failed("billing"), "k").loop.failedProfiles).toEqual([{ profileId: "k", modelIndex: 0, reason: "billing" }]);
    expect(iterate(loopOf(), failed("rate_limit"), "k").loop.failedProfiles).toEqual([]);
  });

  it("model_not_found never rotates profiles and never marks them", () => {
    const step = iterate(loopOf(2, { profileCounts: [3, 1] }), failed("model_not_found"), "a");
    expect(step.decision).toEqual({ action: "attempt", reason: "fallback_model" });
    expect(step.effects).toBeUndefined();
  });
});

describe("silent errors and timeouts (reference §G.70-72, §H)", () => {
  it("resubmits silent server errors 3 times, then fails over", () => {
    const steps = repeatUntilSettled(loopOf(2), failed("server_error"), 10);
    expect(actions(steps).slice(0, 4)).toEqual(["attempt:silent_retry", "attempt:silent_retry", "attempt:silent_retry", "attempt:fallback_model"]);
  });

  it("does not resubmit silently once output was visible", () => {
    expect(iterate(loopOf(), failed("unknown", { responseStarted: true })).decision).toMatchObject({ action: "finalize" });
  });

  it("ends at once on a non-retryable unknown failure (a crashed step that cannot heal)", () => {
    expect(iterate(loopOf(2), failed("unknown", { retryable: false })).decision).toMatchObject({ action: "finalize" });
  });

  it("retries an idle timeout once on the same model only when no fallback exists", () => {
    const steps = repeatUntilSettled(loopOf(), failed("timeout"), 10);
    expect(actions(steps)).toEqual(["attempt:same_model_idle_retry", "finalize:timeout"]);
    expect(iterate(loopOf(2), failed("timeout")).decision).toEqual({ action: "attempt", reason: "fallback_model" });
  });

  it("compacts after a timeout only when the prompt used more than 65% of the window (max 2)", () => {
    const heavy = failed("timeout", {}, { promptTokens: 140_000, contextTokens: 200_000 });
    const light = failed("timeout", {}, { promptTokens: 120_000, contextTokens: 200_000 });
    expect(iterate(loopOf(), light).decision).toEqual({ action: "attempt", reason: "same_model_idle_retry" });
    const first = iterate(loopOf(), heavy);
    expect(first.decision).toEqual({ action: "compact", trigger: "timeout", thenTruncate: false, tokenCount: 140_000 });
    const second = iterate(first.loop, heavy);
    expect(second.decision).toMatchObject({ action: "compact", trigger: "timeout" });
    expect(second.loop.counters.timeoutCompactions).toBe(2);
    expect(iterate(second.loop, heavy).decision).toEqual({ action: "attempt", reason: "same_model_idle_retry" });
  });

  it("trips the idle breaker after 5 consecutive idle timeouts, whatever rotation happened in between", () => {
    const profileFor = (loop: { triedProfiles: string[] }) => String(loop.triedProfiles.length);
    const steps = repeatUntilSettled(loopOf(3, { profileCounts: [3, 3, 3] }), failed("timeout"), 20, profileFor);
    const last = steps[steps.length - 1];
    expect(steps).toHaveLength(LIMITS.consecutiveIdleTimeoutsBeforeBreak);
    expect(last.loop.counters.consecutiveIdleTimeouts).toBe(5);
    expect(last.decision).toMatchObject({
      action: "finalize",
      reason: "idle_timeout_breaker",
      errorKind: "retry_limit",
      livenessState: "blocked",
      error: USER_ERRORS.retryLimit,
      detail: USER_ERRORS.idleBreakerDetail(5, 5),
    });
    expect(new Set(steps.map((s) => (s.decision as { reason?: string }).reason))).toEqual(new Set(["rotate_profile", "fallback_model", "idle_timeout_breaker"]));
  });

  it("only completed model progress resets the breaker; output tokens alone do not", () => {
    const loop = loopOf(3, {}, { counters: { ...loopOf().counters, consecutiveIdleTimeouts: 4 } });
    expect(iterate(loop, failed("timeout", { responseStarted: true }, { completedModelProgress: true })).loop.counters.consecutiveIdleTimeouts).toBe(0);
    expect(iterate(loop, failed("timeout", { responseStarted: true })).decision).toMatchObject({ reason: "idle_timeout_breaker" });
    // A non-timeout failure leaves the count as it is.
    expect(iterate(loop, failed("server_error")).loop.counters.consecutiveIdleTimeouts).toBe(4);
  });
});

describe("format errors: thinking downgrade, role ordering, image size (reference §G.63-66)", () => {
  const openaiEffort = "Unsupported value: 'reasoning_effort' does not support 'minimal' with this model. Supported values are: 'low', 'medium', and 'high'.";
  /** The adapter classifies the provider's 400 once; the loop only reads the fields. */
  const rejected = (message: string): AttemptOutcome => ({
    kind: "failed",
    failure: classifySignal({ status: 400, type: "invalid_request_error", message }, false),
    completedModelProgress: false,
  });

  it("downgrades the thinking level to a supported one and retries", () => {
    const step = iterate(loopOf(1, {}, { thinking: "minimal" }), rejected(openaiEffort));
    expect(step.decision).toEqual({ action: "attempt", reason: "thinking_downgrade" });
    expect(step.loop).toMatchObject({ thinking: "low", attemptedThinking: ["minimal"] });
  });

  it("never retries a level already tried, and turns thinking off on a bare 'not supported'", () => {
    const anthropic = "thinking: Extended thinking is not supported for this model";
    const step = iterate(loopOf(1, {}, { thinking: "high" }), rejected(anthropic));
    expect(step.loop.thinking).toBe("off");
    expect(iterate(step.loop, rejected(anthropic)).decision).toMatchObject({ action: "finalize", reason: "format" });
  });

  it("the adapter reads the accepted levels from the provider's list, constraints and bare refusals", () => {
    expect(acceptedThinkingLevels(openaiEffort)).toEqual(["low", "medium", "high"]);
    expect(pickFallbackThinkingLevel(acceptedThinkingLevels(openaiEffort)!, ["low"])).toBe("medium");
    expect(acceptedThinkingLevels("thinking.budget_tokens: Input should be greater than or equal to 1024")).toEqual(["minimal", "off"]);
    expect(acceptedThinkingLevels("Unsupported parameter: 'reasoning_effort' is not supported with this model.")).toEqual(["off"]);
    expect(acceptedThinkingLevels("messages.1.content: tool_use ids must be unique")).toBeUndefined();
  });

  it("repairs a role-ordering conflict once (strict alternation from then on), then ends it with its message", () => {
    const message = 'messages: roles must alternate between "user" and "assistant", but found multiple "user" roles in a row';
    expect(rejected(message)).toMatchObject({ failure: { kind: "format", cause: { reason: "role_ordering" } } });
    const repaired = iterate(loopOf(2), rejected(message));
    expect(repaired.decision).toEqual({ action: "attempt", reason: "role_ordering_repair" });
    expect(repaired.loop).toMatchObject({ strictTurns: true, counters: { roleOrderingRepairs: 1 } });
    expect(iterate(repaired.loop, rejected(message)).decision).toMatchObject({
      action: "finalize",
      errorKind: "role_ordering",
      error: USER_ERRORS.roleOrdering,
    });
  });

  it("ends an image-size rejection with the provider's limit and no retry", () => {
    const message = "messages.0.content.1.image.source.base64: image exceeds 5 MB maximum: 7340032 bytes > 5242880 bytes";
    expect(iterate(loopOf(2), rejected(message)).decision).toMatchObject({ action: "finalize", errorKind: "image_size", error: USER_ERRORS.imageSize("5") });
  });

  it("the loop never reads provider text: a role-ordering message without the adapter's cause is a plain format error", () => {
    const message = 'messages: roles must alternate between "user" and "assistant"';
    expect(iterate(loopOf(2), failed("format", { message })).decision).toMatchObject({ action: "finalize", errorKind: "format" });
  });

  it("any other format error is terminal, even with a fallback model", () => {
    expect(iterate(loopOf(3), rejected("tool schema invalid")).decision).toMatchObject({ action: "finalize", reason: "format", errorKind: "format" });
  });
});

describe("decideNext is pure", () => {
  it("returns the same step for the same inputs and never mutates its input", () => {
    const loop = loopOf(2, { profileCounts: [2, 1] });
    const frozen = JSON.stringify(loop);
    const a = decideNext(loop, failed("auth"));
    const b = decideNext(loop, failed("auth"));
    expect(a).toEqual(b);
    expect(JSON.stringify(loop)).toBe(frozen);
  });
});
