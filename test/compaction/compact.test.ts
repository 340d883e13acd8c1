import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { appendTurn, claimWriter, readEntries, readTranscript, releaseWriter, type WriterClaim } from "../../shared/aws/transcript";
import { WriterFencedError } from "../../shared/aws/errors";
import { compactTranscript, type CompactRequest } from "../../shared/compaction/compact";
import { truncateStoredToolResults } from "../../shared/compaction/truncate";
import type { AssistantMessage, Message } from "../../shared/core/messages";
import { planCompaction } from "../../shared/core/compaction-plan";
import { isSummaryMessage, modelHistory, sessionView } from "../../shared/core/session-view";
import { HookRegistry } from "../../shared/hooks/registry";
import { createOpenAIChatProvider } from "../../shared/providers/openai-chat";
import { chat, FakeOpenAIServer } from "../support/fake-openai-server";
import { startTestDb, type TestDb } from "../support/local-db";

let t: TestDb;
let oai: FakeOpenAIServer;
beforeAll(async () => {
  t = await startTestDb();
  oai = await FakeOpenAIServer.start();
});
afterAll(async () => {
  await oai.close();
  await t.close();
});
afterEach(() => expect(oai.pending).toBe(0));

const answer = (text: string, callId?: string): AssistantMessage => ({
  role: "assistant",
  content: [{ type: "text", text }, ...(callId ? [{ type: "tool_call" as const, id: callId, name: "read", args: { n: callId } }] : [])],
  provider: "openai",
  model: "gpt-test",
  stopReason: callId ? "tool_calls" : "stop",
  usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
});

/** `turns` turns of ~4 x `tokens` tokens each, committed under one claim. */
async function longTranscript(sessionId: string, turns: number, tokens = 1000): Promise<WriterClaim> {
  let claim = await claimWriter(t.db, sessionId, "run-1", { leaseMs: 60_000, acquireTimeoutMs: 0 });
  for (let i = 0; i < turns; i += 1) {
    claim = await appendTurn(t.db, claim, [{ role: "user", content: `Q${i} ${"q".repeat(tokens * 4)}` }]);
    const result: Message = { role: "tool_result", toolCallId: `c${i}`, toolName: "read", content: `R${i} ${"r".repeat(tokens * 4)}`, isError: false };
    claim = await appendTurn(t.db, claim, [answer(`calling ${i}`, `c${i}`), result]);
    claim = await appendTurn(t.db, claim, [answer(`A${i} ${"a".repeat(tokens * 4)}`)]);
  }
  return claim;
}

function request(overrides: Partial<CompactRequest> = {}): CompactRequest {
  return {
    trigger: "overflow",
    provider: createOpenAIChatProvider({ apiKey: "sk-test", baseURL: oai.baseURL }),
    model: "gpt-test",
    modelRef: "openai/gpt-test",
    contextTokens: 200_000,
    keepRecentTokens: 20_000,
    reserveTokens: 20_000,
    timeoutMs: 10_000,
    signal: new AbortController().signal,
    willRetry: true,
    ...overrides,
  };
}

function recorder() {
  const events: { stream: string; data: Record<string, unknown> }[] = [];
  const calls: string[] = [];
  const hooks = new HookRegistry()
    .register("before_compaction", (e) => void calls.push(`before:${e.messageCount}`))
    .register("after_compaction", (e) => void calls.push(`after:${e.tokenCount}`));
  return { events, calls, hooks, emit: (stream: string, data: Record<string, unknown>) => void events.push({ stream, data }) };
}

describe("compaction of a long transcript (dynalite + fake OpenAI server)", () => {
  it("summarises older history with the model, keeps the newest ~20k tokens, deletes nothing", async () => {
    const claim = await longTranscript("long", 20);
    const before = await readEntries(t.db, "long");
    oai.enqueue(chat.text("SUMMARY: the user asked 20 questions; answers given."));
    const seen = recorder();
    const result = await compactTranscript({ db: t.db, claim, run: { runId: "run-1", sessionKey: "k" }, hooks: seen.hooks, events: seen }, request());
    expect(result.ok).toBe(true);
    if (!result.ok || !result.compacted) return;
    const entries = await readEntries(t.db, "long");
    expect(entries).toHaveLength(before.length + 1); // nothing deleted, one compaction entry added
    expect(entries[entries.length - 1]).toMatchObject({ kind: "compaction", compaction: { firstKeptSeq: result.record.firstKeptSeq, trigger: "overflow", model: "openai/gpt-test" } });
    const history = modelHistory(entries);
    expect(isSummaryMessage(history[0])).toBe(true);
    expect((history[0] as { content: string }).content).toContain("SUMMARY: the user asked 20 questions");
    expect(history[1].role).not.toBe("tool_result");
    expect(result.record.tokensAfter).toBeLessThan(result.record.tokensBefore);
    expect(result.record.tokensAfter).toBeLessThan(25_000);
    // The summary call: no tools, the old conversation in the prompt, bounded output.
    const body = oai.lastRequest!.body as { tools?: unknown[]; messages: { role: string; content: string }[]; max_tokens: number };
    expect(body.tools ?? []).toEqual([]);
    expect(body.messages[body.messages.length - 1].content).toContain("Q0");
    expect(body.max_tokens).toBe(4096);
    expect(seen.calls).toEqual([`before:${before.length}`, `after:${result.record.tokensAfter}`]);
    expect(seen.events.map((e) => e.data)).toEqual([
      { phase: "start", reason: "overflow" },
      { phase: "end", willRetry: true, completed: true, tokensBefore: result.record.tokensBefore, tokensAfter: result.record.tokensAfter },
    ]);
    await releaseWriter(t.db, result.claim);
  });

  it("sizes the compaction for a smaller next model: keeps less and summarises in window-sized chunks", async () => {
    const claim = await longTranscript("small", 12);
    const plan = planCompaction({ view: sessionView(await readEntries(t.db, "small")).messages, contextTokens: 16_000, keepRecentTokens: 20_000, reserveTokens: 20_000 });
    const chunks = plan.compact ? plan.chunks.length : 0;
    expect(chunks).toBeGreaterThan(1);
    oai.enqueue(...Array.from({ length: chunks }, (_, i) => chat.text(`rolling summary ${i}`)));
    const first = oai.requests.length;
    const result = await compactTranscript({ db: t.db, claim, run: { runId: "run-1", sessionKey: "k" } }, request({ contextTokens: 16_000 }));
    expect(result.ok).toBe(true);
    if (!result.ok || !result.compacted) return;
    expect(result.record).toMatchObject({ contextTokens: 16_000, summary: `rolling summary ${chunks - 1}` });
    expect(result.record.tokensAfter).toBeLessThan(8000);
    const calls = oai.requests.slice(first).map((r) => r.body as { messages: { content: string }[] });
    for (const call of calls) expect(JSON.stringify(call.messages).length / 4).toBeLessThan(16_000);
    // Each call folds the summary so far into the next chunk.
    expect(calls[1].messages[calls[1].messages.length - 1].content).toContain("rolling summary 0");
    await releaseWriter(t.db, result.claim);
  });

  it("fails cleanly when the summary call outlives its own timeout; nothing is written", async () => {
    const claim = await longTranscript("slow", 10);
    const before = await readEntries(t.db, "slow");
    oai.enqueue(chat.stall());
    const seen = recorder();
    const result = await compactTranscript({ db: t.db, claim, run: { runId: "run-1", sessionKey: "k" }, events: seen }, request({ timeoutMs: 300, keepRecentTokens: 2000 }));
    expect(result).toMatchObject({ ok: false, reason: expect.stringContaining("timed out after 300 ms") });
    expect(await readEntries(t.db, "slow")).toHaveLength(before.length);
    expect(seen.events.map((e) => e.data.phase)).toEqual(["start", "end"]);
    expect(seen.events[1].data).toMatchObject({ completed: false, willRetry: false });
    await releaseWriter(t.db, claim);
  });

  it("takes the writer claim: a compaction by a writer that lost it is refused", async () => {
    const stale = await longTranscript("fenced", 8);
    t.advance(120_000); // the lease (60 s) expires
    const taker = await claimWriter(t.db, "fenced", "run-2", { leaseMs: 60_000, acquireTimeoutMs: 0 });
    oai.enqueue(chat.text("too late"));
    await expect(compactTranscript({ db: t.db, claim: stale, run: { runId: "run-1", sessionKey: "k" } }, request({ keepRecentTokens: 2000 }))).rejects.toBeInstanceOf(WriterFencedError);
    expect((await readEntries(t.db, "fenced")).some((e) => e.kind === "compaction")).toBe(false);
    await releaseWriter(t.db, taker);
  });

  it("says so when there is nothing to compact", async () => {
    const claim = await longTranscript("short", 1, 100);
    const result = await compactTranscript({ db: t.db, claim, run: { runId: "run-1", sessionKey: "k" } }, request());
    expect(result).toMatchObject({ ok: false, reason: expect.stringContaining("nothing to compact") });
    await releaseWriter(t.db, claim);
  });

  it("forced: a short session the estimate keeps whole is summarised up to the current turn, which stays verbatim", async () => {
    let claim = await longTranscript("forced", 2, 100);
    claim = await appendTurn(t.db, claim, [{ role: "user", content: "What did we cover?" }]);
    oai.enqueue(chat.text("SUMMARY: two questions, two answers."));
    const result = await compactTranscript({ db: t.db, claim, run: { runId: "run-1", sessionKey: "k" } }, request({ force: true, tokenScale: 1.5 }));
    expect(result).toMatchObject({ ok: true, compacted: true });
    if (!result.ok || !result.compacted) return;
    const history = modelHistory(await readEntries(t.db, "forced"));
    expect(history.map((m) => m.role)).toEqual(["user", "user"]);
    expect(isSummaryMessage(history[0])).toBe(true);
    expect(history[1]).toEqual({ role: "user", content: "What did we cover?" });
    expect(result.record.summarizedMessages).toBe(8);
    await releaseWriter(t.db, result.claim);
  });

  it("forced with nothing before the current turn: no real conversation, the run goes on without a summary call", async () => {
    let claim = await claimWriter(t.db, "lonely", "run-1", { leaseMs: 60_000, acquireTimeoutMs: 0 });
    claim = await appendTurn(t.db, claim, [{ role: "user", content: "One huge question" }]);
    const seen = recorder();
    const result = await compactTranscript({ db: t.db, claim, run: { runId: "run-1", sessionKey: "k" }, events: seen }, request({ force: true }));
    expect(result).toMatchObject({ ok: true, compacted: false, reason: expect.stringContaining("no real conversation") });
    expect(seen.events.map((e) => e.data)).toEqual([
      { phase: "start", reason: "overflow" },
      { phase: "end", willRetry: true, completed: false },
    ]);
    await releaseWriter(t.db, claim);
  });
});

describe("truncation of oversized stored tool results", () => {
  it("rewrites them head + tail under the claim; the original stays stored", async () => {
    let claim = await claimWriter(t.db, "trunc", "run-1", { leaseMs: 60_000, acquireTimeoutMs: 0 });
    claim = await appendTurn(t.db, claim, [{ role: "user", content: "fetch" }]);
    const big = `BEGIN\n${"line of output\n".repeat(20_000)}Traceback: failed at END`;
    claim = await appendTurn(t.db, claim, [answer("", "c1"), { role: "tool_result", toolCallId: "c1", toolName: "read", content: big, isError: false }]);
    const cut = await truncateStoredToolResults(t.db, claim, 8000);
    expect(cut.rewritten).toBe(1);
    const history = modelHistory(await readEntries(t.db, "trunc"));
    const shown = history[2] as { content: string };
    expect(shown.content.length).toBeLessThanOrEqual(8000);
    expect(shown.content).toContain("BEGIN");
    expect(shown.content).toContain("failed at END");
    expect((await readTranscript(t.db, "trunc"))[2].message).toMatchObject({ content: big });
    // Nothing left to cut: a second pass writes nothing.
    expect((await truncateStoredToolResults(t.db, cut.claim, 8000)).rewritten).toBe(0);
    await releaseWriter(t.db, cut.claim);
  });
});
