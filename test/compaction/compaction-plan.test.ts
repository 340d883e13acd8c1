import { describe, expect, it } from "vitest";
import { chunkTranscript, planCompaction, planToolResultTruncation, promptBudgetTokens } from "../../shared/core/compaction-plan";
import type { AssistantMessage, Message } from "../../shared/core/messages";
import { isSummaryMessage, modelHistory, sessionView, SUMMARY_PREFIX } from "../../shared/core/session-view";
import type { SeqEntry } from "../../shared/core/transcript-entries";

const assistant = (text: string, calls: { id: string; name: string }[] = []): AssistantMessage => ({
  role: "assistant",
  content: [{ type: "text", text }, ...calls.map((c) => ({ type: "tool_call" as const, id: c.id, name: c.name, args: {} }))],
  provider: "openai",
  model: "m",
  stopReason: calls.length ? "tool_calls" : "stop",
  usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
});
const user = (text: string): Message => ({ role: "user", content: text });
const result = (id: string, text: string): Message => ({ role: "tool_result", toolCallId: id, toolName: "read", content: text, isError: false });

/** A conversation of `turns` user/tool/answer turns, each about `tokens` tokens. */
function conversation(turns: number, tokens = 1000): SeqEntry[] {
  const messages: Message[] = [];
  for (let i = 0; i < turns; i += 1) {
    messages.push(user(`question ${i} ${"q".repeat(tokens * 4)}`));
    messages.push(assistant(`looking ${i}`, [{ id: `c${i}`, name: "read" }]));
    messages.push(result(`c${i}`, `data ${i} ${"d".repeat(tokens * 4)}`));
    messages.push(assistant(`answer ${i}`));
  }
  return messages.map((message, seq) => ({ seq, message }));
}

describe("sessionView", () => {
  it("shows every message when nothing was compacted, skipping notes", () => {
    const entries: SeqEntry[] = [
      { seq: 0, kind: "note", note: { type: "session_start", sessionKey: "k" } },
      { seq: 1, message: user("hi") },
      { seq: 2, message: assistant("hello") },
    ];
    expect(modelHistory(entries)).toEqual([user("hi"), assistant("hello")]);
  });

  it("after a compaction: the summary, then the messages from firstKeptSeq on (older ones stay stored, unseen)", () => {
    const entries: SeqEntry[] = [
      ...conversation(3, 10),
      { seq: 12, kind: "compaction", compaction: { summary: "S", firstKeptSeq: 8, tokensBefore: 1, tokensAfter: 1, trigger: "overflow", model: "openai/m", contextTokens: 1000, summarizedMessages: 8 } },
      { seq: 13, message: user("next") },
    ];
    const view = sessionView(entries);
    expect(view.messages.map((m) => m.seq)).toEqual([undefined, 8, 9, 10, 11, 13]);
    expect(isSummaryMessage(view.messages[0].message)).toBe(true);
    expect((view.messages[0].message as { content: string }).content).toBe(`${SUMMARY_PREFIX}\n\nS`);
    expect(view.compaction?.seq).toBe(12);
  });

  it("applies the latest rewrite of a tool result in place of the original", () => {
    const entries: SeqEntry[] = [
      ...conversation(1, 10),
      { seq: 4, kind: "rewrite", rewrite: { targetSeq: 2, reason: "tool_result_truncation", message: result("c0", "short"), originalChars: 50 } },
    ];
    expect(modelHistory(entries)[2]).toEqual(result("c0", "short"));
  });
});

describe("planCompaction", () => {
  it("sizes the prompt budget like the precheck: window minus min(reserve, window - min(8000, window/2))", () => {
    expect(promptBudgetTokens(200_000, 20_000)).toBe(180_000);
    expect(promptBudgetTokens(16_000, 20_000)).toBe(8000);
    expect(promptBudgetTokens(10_000, 20_000)).toBe(5000);
  });

  it("keeps the newest ~keepRecentTokens verbatim from a turn boundary and summarises the rest", () => {
    const view = sessionView(conversation(20, 1000)).messages;
    const plan = planCompaction({ view, contextTokens: 200_000, keepRecentTokens: 20_000, reserveTokens: 20_000 });
    expect(plan.compact).toBe(true);
    if (!plan.compact) return;
    const kept = view.filter((m) => m.seq! >= plan.firstKeptSeq);
    expect(plan.keptTokens).toBeLessThanOrEqual(20_000);
    expect(plan.keptTokens).toBeGreaterThan(15_000);
    expect(kept[0].message.role).not.toBe("tool_result");
    expect(plan.toSummarize).toHaveLength(view.length - kept.length);
    expect(plan.chunks.join("")).toContain("question 0");
    expect(plan.summaryMaxTokens).toBe(4096);
  });

  it("targets the window of the model that runs next: a smaller window keeps less", () => {
    const view = sessionView(conversation(20, 1000)).messages;
    const big = planCompaction({ view, contextTokens: 200_000, keepRecentTokens: 20_000, reserveTokens: 20_000 });
    const small = planCompaction({ view, contextTokens: 16_000, keepRecentTokens: 20_000, reserveTokens: 20_000 });
    if (!big.compact || !small.compact) throw new Error("expected both to compact");
    expect(small.keptTokens).toBeLessThanOrEqual(4000);
    expect(small.firstKeptSeq).toBeGreaterThan(big.firstKeptSeq);
    // Each summariser call fits the small window too.
    for (const chunk of small.chunks) expect(chunk.length / 4).toBeLessThan(8000);
    expect(small.chunks.length).toBeGreaterThan(1);
  });

  it("keeps only what fits next to the system prompt the attempt sends (bootstrap files, skills, tools)", () => {
    const view = sessionView(conversation(20, 1000)).messages;
    const bare = planCompaction({ view, contextTokens: 64_000, keepRecentTokens: 40_000, reserveTokens: 20_000 });
    const heavy = planCompaction({ view, contextTokens: 64_000, keepRecentTokens: 40_000, reserveTokens: 20_000, systemPromptTokens: 30_000 });
    if (!bare.compact || !heavy.compact) throw new Error("expected both to compact");
    // Budget 44k: half of it without the prompt, half of (44k - 30k) with it.
    expect(bare.keptTokens).toBeLessThanOrEqual(22_000);
    expect(heavy.keptTokens).toBeLessThanOrEqual(7_000);
    expect(heavy.firstKeptSeq).toBeGreaterThan(bare.firstKeptSeq);
  });

  it("never starts the kept part at a tool result, so no result loses its tool call", () => {
    for (let keep = 500; keep < 6000; keep += 250) {
      const view = sessionView(conversation(6, 1000)).messages;
      const plan = planCompaction({ view, contextTokens: 200_000, keepRecentTokens: keep, reserveTokens: 0 });
      if (!plan.compact) continue;
      const first = view.find((m) => m.seq === plan.firstKeptSeq);
      if (first) expect(first.message.role).not.toBe("tool_result");
    }
  });

  it("has nothing to compact when everything already fits in the kept part", () => {
    const view = sessionView(conversation(2, 100)).messages;
    expect(planCompaction({ view, contextTokens: 200_000, keepRecentTokens: 20_000, reserveTokens: 20_000 })).toEqual({ compact: false, reason: "nothing_to_compact" });
  });

  it("sizes with the provider's count: a 20x tokenizer scale turns 'keeps all' into a real cut", () => {
    const view = sessionView(conversation(4, 500)).messages;
    expect(planCompaction({ view, contextTokens: 128_000, keepRecentTokens: 20_000, reserveTokens: 20_000 }).compact).toBe(false);
    const scaled = planCompaction({ view, contextTokens: 128_000, keepRecentTokens: 20_000, reserveTokens: 20_000, tokenScale: 20 });
    if (!scaled.compact) throw new Error("expected a compaction");
    expect(scaled.forced).toBe(false);
    expect(scaled.keptTokens).toBeLessThanOrEqual(20_000);
    expect(scaled.toSummarize.length).toBeGreaterThan(0);
    // Every summariser call fits the provider's window as the provider counts it.
    for (const chunk of scaled.chunks) expect((chunk.length / 4) * 20).toBeLessThan(128_000);
  });

  it("forced: when the budget keeps everything, summarises everything before the current turn", () => {
    const entries = [...conversation(2, 100), { seq: 8, message: user("the question being answered") }];
    const view = sessionView(entries).messages;
    const plan = planCompaction({ view, contextTokens: 200_000, keepRecentTokens: 20_000, reserveTokens: 20_000, force: true });
    if (!plan.compact) throw new Error("expected a forced compaction");
    expect(plan).toMatchObject({ forced: true, firstKeptSeq: 8 });
    expect(plan.toSummarize).toHaveLength(8);
  });

  it("forced with only the current turn (a summary before it does not count): no real conversation", () => {
    const entries: SeqEntry[] = [
      ...conversation(1, 100),
      { seq: 4, kind: "compaction", compaction: { summary: "EARLIER", firstKeptSeq: 5, tokensBefore: 1, tokensAfter: 1, trigger: "overflow", model: "openai/m", contextTokens: 1000, summarizedMessages: 4 } },
      { seq: 5, message: user("only this") },
      { seq: 6, message: assistant("calling", [{ id: "c9", name: "read" }]) },
      { seq: 7, message: result("c9", "data") },
    ];
    const plan = planCompaction({ view: sessionView(entries).messages, contextTokens: 200_000, keepRecentTokens: 20_000, reserveTokens: 20_000, force: true });
    expect(plan).toEqual({ compact: false, reason: "no_real_conversation" });
  });

  it("folds the previous summary into the next compaction", () => {
    const entries: SeqEntry[] = [
      ...conversation(10, 1000),
      { seq: 40, kind: "compaction", compaction: { summary: "EARLIER", firstKeptSeq: 4, tokensBefore: 1, tokensAfter: 1, trigger: "overflow", model: "openai/m", contextTokens: 1000, summarizedMessages: 4 } },
    ];
    const plan = planCompaction({ view: sessionView(entries).messages, contextTokens: 200_000, keepRecentTokens: 5000, reserveTokens: 20_000 });
    expect(plan.compact && plan.previousSummary).toContain("EARLIER");
    expect(plan.compact && plan.toSummarize.every((m) => !(m.role === "user" && m.content.startsWith(SUMMARY_PREFIX)))).toBe(true);
  });

  it("cuts long tool output to head and tail inside the summariser's input", () => {
    const chunks = chunkTranscript([result("x", `START ${"z".repeat(50_000)} error: END`)], 100_000);
    expect(chunks[0].length).toBeLessThan(6000);
    expect(chunks[0]).toContain("START");
    expect(chunks[0]).toContain("END");
  });
});

describe("planToolResultTruncation", () => {
  it("rewrites only visible tool results over the cap, keeping head and tail", () => {
    const big = `HEAD ${"x".repeat(40_000)}\nTraceback: boom TAIL`;
    const entries: SeqEntry[] = [
      { seq: 0, message: user("go") },
      { seq: 1, message: assistant("", [{ id: "a", name: "read" }, { id: "b", name: "read" }]) },
      { seq: 2, message: result("a", big) },
      { seq: 3, message: result("b", "small") },
    ];
    const rewrites = planToolResultTruncation(sessionView(entries).messages, 4000);
    expect(rewrites.map((r) => r.targetSeq)).toEqual([2]);
    expect(rewrites[0].originalChars).toBe(big.length);
    expect(rewrites[0].message.content.length).toBeLessThanOrEqual(4000);
    expect(rewrites[0].message.content).toContain("HEAD");
    expect(rewrites[0].message.content).toContain("TAIL");
    expect(rewrites[0].message.toolCallId).toBe("a");
  });
});
