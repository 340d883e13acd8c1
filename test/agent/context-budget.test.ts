import { describe, expect, it } from "vitest";
import {
  checkContextGuard,
  CONTEXT_GUARD_MESSAGE,
  precheckContext,
  reducibleToolResultChars,
  resolveToolResultMaxChars,
} from "../../shared/core/context-budget";
import { resolveIdleTimeoutMs } from "../../shared/core/idle-timeout";
import { budgetBreach, spendOf, usageCostUsd } from "../../shared/core/spend";
import { assistant, call, result, text, user } from "./helpers";

/** A message of exactly `chars` characters. */
const userOf = (chars: number) => user("x".repeat(chars));
const toolResultOf = (chars: number) => result("c1", "y".repeat(chars));

describe("precheckContext: the four routes and their formulas", () => {
  // budget 10_000, reserve 2_000 -> minPrompt = min(8000, 5000) = 5000; reserve = min(2000, 5000) = 2000;
  // promptBudget = 8000 tokens. Estimate = ceil(chars / 4) * 1.2.
  const base = { system: "", contextTokenBudget: 10_000, reserveTokens: 2_000, toolResultMaxChars: 2_000 };

  it("fits when the estimate (x1.2) is within budget - reserve", () => {
    const check = precheckContext({ ...base, messages: [userOf(26_000)] }); // 6500 tokens * 1.2 = 7800
    expect(check).toMatchObject({ route: "fits", estimatedTokens: 7800, promptBudgetTokens: 8000, overflowTokens: -200 });
  });

  it("compact_only when over budget and no tool result can be shortened", () => {
    const check = precheckContext({ ...base, messages: [userOf(40_000)] }); // 10000 * 1.2 = 12000
    expect(check).toMatchObject({ route: "compact_only", estimatedTokens: 12_000, overflowTokens: 4000, reducibleChars: 0 });
  });

  it("truncate_tool_results_only when truncation frees max(overflowChars + 2048, 1.5 x overflowChars)", () => {
    // user 20_000 + tool call "t" + "{}" (3) + result 14_000 = 34_003 chars -> 8501 tokens -> x1.2 = 10_202
    // -> overflow 2202 tokens = 8808 chars; needed = max(8808 + 2048, 13_212) = 13_212 > reducible 12_000.
    const messages = [userOf(20_000), assistant([call("c1", "t")]), toolResultOf(14_000)];
    const tight = precheckContext({ ...base, messages });
    expect(tight).toMatchObject({ overflowTokens: 2202, reducibleChars: 12_000, route: "compact_then_truncate" });
    // A larger tool result in a smaller history: reducible 30_000 >= needed.
    const roomy = precheckContext({ ...base, messages: [userOf(4_000), assistant([call("c1", "t")]), toolResultOf(32_000)] });
    expect(roomy.route).toBe("truncate_tool_results_only");
    expect(roomy.reducibleChars).toBe(30_000);
  });

  it("keeps at least min(8000, half the budget) tokens for the prompt, whatever the reserve", () => {
    const tiny = precheckContext({ ...base, contextTokenBudget: 4_000, reserveTokens: 50_000, messages: [userOf(4)] });
    expect(tiny.promptBudgetTokens).toBe(2_000); // minPrompt = min(8000, 2000); reserve capped at 2000
    const big = precheckContext({ ...base, contextTokenBudget: 200_000, reserveTokens: 20_000, messages: [userOf(4)] });
    expect(big.promptBudgetTokens).toBe(180_000);
  });

  it("counts system prompt, text, reasoning and tool-call arguments", () => {
    const messages = [assistant([text("abcd"), { type: "thinking", text: "efgh" }, call("c", "name", { a: 1 })])];
    const check = precheckContext({ ...base, system: "12345678", messages });
    // 8 + 4 + 4 + ("name" 4 + '{"a":1}' 7) = 27 chars -> 7 tokens -> 8.4 -> 9
    expect(check.estimatedTokens).toBe(9);
  });

  it("reducible chars only count results above the cap (never below 2000)", () => {
    expect(reducibleToolResultChars([toolResultOf(2_500), toolResultOf(1_000)], 500)).toBe(500);
  });
});

describe("tool-result caps by window", () => {
  it("30% of the window, hard caps 16k / 32k / 64k by window size, never below 2000", () => {
    expect(resolveToolResultMaxChars(200_000)).toBe(64_000);
    expect(resolveToolResultMaxChars(128_000)).toBe(32_000);
    expect(resolveToolResultMaxChars(32_000)).toBe(16_000);
    expect(resolveToolResultMaxChars(8_000)).toBe(9_600); // 8000 * 0.3 * 4
    expect(resolveToolResultMaxChars(1_000)).toBe(2_000);
    expect(resolveToolResultMaxChars(200_000, 10_000)).toBe(10_000); // configured hard cap
  });
});

describe("in-loop context guard", () => {
  const window = 1_000; // 4000 chars

  it("flags one tool result over 50% of the window", () => {
    const guard = checkContextGuard("", [user("q"), toolResultOf(2_001)], window);
    expect(guard).toEqual({ ok: false, reason: "single_tool_result", chars: 2_001, limitChars: 2_000, message: CONTEXT_GUARD_MESSAGE });
  });

  it("flags a context over 90% of the window, and passes below", () => {
    expect(checkContextGuard("s".repeat(1_000), [userOf(2_601)], window)).toMatchObject({ ok: false, reason: "context", limitChars: 3_600 });
    expect(checkContextGuard("s".repeat(1_000), [userOf(2_600)], window)).toEqual({ ok: true });
  });
});

describe("idle timeout", () => {
  it("uses the configured window, lets a provider's timeoutSeconds extend it, never past the run's remaining budget", () => {
    expect(resolveIdleTimeoutMs({ idleTimeoutSeconds: 120 })).toBe(120_000);
    expect(resolveIdleTimeoutMs({ idleTimeoutSeconds: 120, providerTimeoutSeconds: 300 })).toBe(300_000);
    expect(resolveIdleTimeoutMs({ idleTimeoutSeconds: 120, providerTimeoutSeconds: 60 })).toBe(120_000);
    expect(resolveIdleTimeoutMs({ idleTimeoutSeconds: 120, providerTimeoutSeconds: 300, runRemainingMs: 200_000 })).toBe(200_000);
    expect(resolveIdleTimeoutMs({ idleTimeoutSeconds: 120, runRemainingMs: 10 })).toBe(1000);
    expect(resolveIdleTimeoutMs({ idleTimeoutSeconds: 0, providerTimeoutSeconds: 300 })).toBeUndefined();
  });
});

describe("spend", () => {
  const used = { input: 1_000_000, output: 500_000, cacheRead: 200_000, cacheWrite: 0 };

  it("prices per million tokens; cache reads default to the input price", () => {
    expect(usageCostUsd(used, { input: 2, output: 8 })).toBeCloseTo(2 + 4 + 0.4);
    expect(usageCostUsd(used, { input: 2, output: 8, cacheRead: 0.5 })).toBeCloseTo(2 + 4 + 0.1);
    expect(usageCostUsd(used, undefined)).toBe(0);
    expect(spendOf(used, undefined).tokens).toBe(1_700_000);
  });

  it("a budget is breached once spend reaches it (tokens checked before cost)", () => {
    expect(budgetBreach({ tokens: 99, costUsd: 0 }, { maxTokens: 100 })).toBeUndefined();
    expect(budgetBreach({ tokens: 100, costUsd: 0 }, { maxTokens: 100 })).toEqual({ limit: "tokens", spent: 100, max: 100 });
    expect(budgetBreach({ tokens: 1, costUsd: 0.5 }, { maxCostUsd: 0.5 })).toEqual({ limit: "cost", spent: 0.5, max: 0.5 });
    expect(budgetBreach({ tokens: 1e9, costUsd: 1e9 }, undefined)).toBeUndefined();
  });
});
