import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keys, MAX_ITEM_BYTES } from "../../shared/aws/keys";
import { appendEntries, appendTurn, claimWriter, readEntries, readTranscript, releaseWriter } from "../../shared/aws/transcript";
import { SessionBusyError, TranscriptInvariantError, WriterFencedError } from "../../shared/aws/errors";
import type { AssistantMessage } from "../../shared/core/messages";
import { modelHistory } from "../../shared/core/session-view";
import { diffSnapshots, SdkMeter, sumOf } from "../../shared/aws/metering";
import { startTestDb, type TestDb } from "../support/local-db";

const reply = (text: string, calls: { id: string }[] = []): AssistantMessage => ({
  role: "assistant",
  content: [{ type: "text", text }, ...calls.map((c) => ({ type: "tool_call" as const, id: c.id, name: "read", args: {} }))],
  provider: "offline",
  model: "echo",
  stopReason: calls.length ? "tool_calls" : "stop",
  usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0 },
});

let t: TestDb;
beforeAll(async () => {
  t = await startTestDb();
});
afterAll(async () => t.close());

const claimOptions = { leaseMs: 10_000, acquireTimeoutMs: 5_000 };

describe("many writers racing on one session (dynalite, real concurrency)", () => {
  it("only the claim holder commits; sequence numbers have no gaps and no duplicates", async () => {
    const writers = Array.from({ length: 6 }, (_, i) => `run-${i}`);
    // Every writer claims, appends one user message and one answer, and releases; they all race.
    const outcomes = await Promise.allSettled(
      writers.map(async (runId) => {
        const claim = await claimWriter(t.db, "race", runId, { leaseMs: 10_000, acquireTimeoutMs: 30_000 });
        try {
          const afterUser = await appendTurn(t.db, claim, [{ role: "user", content: `from ${runId}` }]);
          await appendTurn(t.db, afterUser, [reply(`answer ${runId}`)]);
        } finally {
          await releaseWriter(t.db, claim);
        }
      }),
    );
    expect(outcomes.every((o) => o.status === "fulfilled")).toBe(true);
    const entries = await readTranscript(t.db, "race");
    expect(entries.map((e) => e.seq)).toEqual([...Array(12).keys()]);
    // Each writer's two entries are adjacent: no interleaving while a claim is held.
    for (let i = 0; i < 12; i += 2) {
      expect(entries[i].runId).toBe(entries[i + 1].runId);
      expect(entries[i].epoch).toBe(entries[i + 1].epoch);
    }
    expect(new Set(entries.map((e) => e.runId)).size).toBe(6);
  });

  it("a writer that does not hold the claim cannot commit even with a stale copy of it", async () => {
    const holder = await claimWriter(t.db, "stale", "run-a", claimOptions);
    const stale = { ...holder, runId: "run-b" };
    await releaseWriter(t.db, holder);
    const next = await claimWriter(t.db, "stale", "run-c", claimOptions);
    await expect(appendTurn(t.db, stale, [{ role: "user", content: "late" }])).rejects.toBeInstanceOf(WriterFencedError);
    await appendTurn(t.db, next, [{ role: "user", content: "ok" }]);
    expect((await readTranscript(t.db, "stale")).map((e) => e.runId)).toEqual(["run-c"]);
  });

  it("a second writer waits up to acquireTimeoutMs, then gets a clear session-busy error", async () => {
    const holder = await claimWriter(t.db, "busy", "run-a", claimOptions);
    const error = await claimWriter(t.db, "busy", "run-b", { leaseMs: 1000, acquireTimeoutMs: 300 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SessionBusyError);
    expect((error as Error).message).toMatch(/session busy \(writer run-a\)|is busy \(writer run-a\)/);
    await releaseWriter(t.db, holder);
  });

  it("takes over an expired lease: the old writer's late entries and commits are refused", async () => {
    const old = await claimWriter(t.db, "lease", "run-old", { leaseMs: 1000, acquireTimeoutMs: 0 });
    const oldAfterUser = await appendTurn(t.db, old, [{ role: "user", content: "before" }]);
    t.advance(2000);
    const fresh = await claimWriter(t.db, "lease", "run-new", claimOptions);
    await expect(appendTurn(t.db, oldAfterUser, [reply("zombie")])).rejects.toBeInstanceOf(WriterFencedError);
    await expect(appendEntries(t.db, oldAfterUser, [{ kind: "note", note: { type: "session_end", sessionKey: "k" } }])).rejects.toBeInstanceOf(WriterFencedError);
    await appendTurn(t.db, fresh, [reply("alive")]);
    const entries = await readEntries(t.db, "lease");
    expect(entries.map((e) => e.runId)).toEqual(["run-old", "run-new"]);
  });
});

describe("entries and invariants", () => {
  it("caps a 1 MB tool result (head + tail) so the item stays under 400 KB", async () => {
    const claim = await claimWriter(t.db, "big", "run-a", claimOptions);
    const afterUser = await appendTurn(t.db, claim, [{ role: "user", content: "read it" }]);
    const huge = `FIRST LINE\n${"🙂".repeat(262_144)}\nLAST LINE: error at the end`; // ~1 MB of UTF-8
    expect(Buffer.byteLength(huge)).toBeGreaterThan(1_000_000);
    await appendTurn(t.db, afterUser, [reply("", [{ id: "c1" }]), { role: "tool_result", toolCallId: "c1", toolName: "read", content: huge, isError: false }]);
    const stored = await t.db.doc.send(new GetCommand({ TableName: t.db.table, Key: keys.transcriptEntry("big", 2) }));
    expect(Buffer.byteLength(JSON.stringify(stored.Item))).toBeLessThan(MAX_ITEM_BYTES);
    const content = (stored.Item!.message as { content: string }).content;
    expect(content.startsWith("FIRST LINE")).toBe(true);
    expect(content).toContain("LAST LINE: error at the end");
    await releaseWriter(t.db, claim);
  });

  it("a stale task of the same run cannot release its successor's claim (the epoch is checked)", async () => {
    const stale = await claimWriter(t.db, "epochs", "run-a", claimOptions);
    const successor = await claimWriter(t.db, "epochs", "run-a", { ...claimOptions, allowReentrant: true });
    expect(successor.epoch).toBeGreaterThan(stale.epoch);
    expect(await releaseWriter(t.db, stale)).toBe(false);
    // The successor still holds it: another run cannot take it.
    await expect(claimWriter(t.db, "epochs", "run-b", { ...claimOptions, acquireTimeoutMs: 0 })).rejects.toThrow();
    expect(await releaseWriter(t.db, successor)).toBe(true);
    // Finalize releases whatever claim the run holds (no epoch).
    const again = await claimWriter(t.db, "epochs", "run-a", claimOptions);
    expect(await releaseWriter(t.db, { sessionId: again.sessionId, runId: "run-a" })).toBe(true);
  });

  it("refuses a turn that breaks the invariants, for both providers' rules, and writes nothing", async () => {
    const claim = await claimWriter(t.db, "inv", "run-a", claimOptions);
    const afterUser = await appendTurn(t.db, claim, [{ role: "user", content: "hi" }]);
    const orphan = { role: "tool_result" as const, toolCallId: "x", toolName: "read", content: "1", isError: false };
    await expect(appendTurn(t.db, afterUser, [orphan])).rejects.toBeInstanceOf(TranscriptInvariantError);
    await expect(appendTurn(t.db, afterUser, [reply("", [{ id: "c1" }])])).rejects.toBeInstanceOf(TranscriptInvariantError);
    const afterAnswer = await appendTurn(t.db, afterUser, [reply("hello")]);
    await expect(appendTurn(t.db, afterAnswer, [reply("again")])).rejects.toBeInstanceOf(TranscriptInvariantError);
    expect((await readTranscript(t.db, "inv")).map((e) => e.message.role)).toEqual(["user", "assistant"]);
    await releaseWriter(t.db, claim);
  });

  it("keeps checking invariants against the last message after compaction entries and notes", async () => {
    const claim = await claimWriter(t.db, "kinds", "run-a", claimOptions);
    let next = await appendTurn(t.db, claim, [{ role: "user", content: "q" }], [{ kind: "note", note: { type: "session_start", sessionKey: "k" } }]);
    next = await appendTurn(t.db, next, [reply("a")]);
    next = await appendEntries(t.db, next, [
      { kind: "compaction", compaction: { summary: "S", firstKeptSeq: 2, tokensBefore: 10, tokensAfter: 5, trigger: "manual", model: "offline/echo", contextTokens: 1000, summarizedMessages: 1 } },
    ]);
    await releaseWriter(t.db, claim);
    // A fresh claim finds the last *message* (the answer) behind the compaction entry.
    const again = await claimWriter(t.db, "kinds", "run-b", claimOptions);
    expect(again.lastMessage).toEqual(reply("a"));
    await expect(appendTurn(t.db, again, [reply("twice")])).rejects.toBeInstanceOf(TranscriptInvariantError);
    await appendTurn(t.db, again, [{ role: "user", content: "next" }]);
    const entries = await readEntries(t.db, "kinds");
    expect(entries.map((e) => e.kind ?? "message")).toEqual(["note", "message", "message", "compaction", "message"]);
    expect((await readTranscript(t.db, "kinds")).map((e) => e.seq)).toEqual([1, 2, 4]);
    expect(modelHistory(entries).map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    await expect(appendEntries(t.db, again, [{ message: { role: "user", content: "sneaky" } }])).rejects.toBeInstanceOf(TranscriptInvariantError);
    await releaseWriter(t.db, again);
  });
});

describe("what one turn costs in DynamoDB units (ReturnConsumedCapacity, via the SDK meter)", () => {
  it("a simple turn (user message, then the answer, each under its own claim) stays under 10 write units", async () => {
    // The first turn of a session also writes its session_start note (one unit more than later turns).
    const meter = new SdkMeter();
    meter.attach(t.client, "dynamodb");
    const before = meter.snapshot();
    // StartRun: claim, append the user message, release. Attempt: claim, append the answer, release.
    const first = await claimWriter(t.db, "cost", "run-a", claimOptions);
    await appendTurn(t.db, first, [{ role: "user", content: "What is the capital of France?" }], [{ kind: "note", note: { type: "session_start", sessionKey: "k" } }], { release: true });
    const second = await claimWriter(t.db, "cost", "run-a", { ...claimOptions, allowReentrant: true });
    await appendTurn(t.db, second, [reply("Paris.")]);
    await releaseWriter(t.db, second);
    const used = diffSnapshots(before, meter.snapshot());
    const writes = sumOf(used, "dynamodb", "writeUnits");
    const reads = sumOf(used, "dynamodb", "readUnits");
    console.log(`transcript, one turn: ${writes} WRU, ${reads} RRU`, JSON.stringify(Object.fromEntries(Object.entries(used).map(([k, v]) => [k, { calls: v.calls, w: v.writeUnits, r: v.readUnits }]))));
    expect(writes).toBeLessThan(10);
  });
});

describe("release in the commit", () => {
  it("gives the claim up with the last commit, so the next writer claims at once", async () => {
    const claim = await claimWriter(t.db, "release", "run-a", claimOptions);
    await appendTurn(t.db, claim, [{ role: "user", content: "hi" }], [], { release: true });
    const next = await claimWriter(t.db, "release", "run-b", { leaseMs: 1000, acquireTimeoutMs: 0 });
    expect(next.lastMessage).toEqual({ role: "user", content: "hi" });
    await releaseWriter(t.db, next);
  });
});
