import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appendTurn, claimWriter, readTranscript, releaseWriter } from "../../shared/aws/transcript";
import { SessionBusyError, TranscriptInvariantError, WriterFencedError } from "../../shared/aws/errors";
import { startTestDb, type TestDb } from "../support/local-db";
import { assistantReply } from "../support/messages";

const reply = assistantReply;

let t: TestDb;
beforeAll(async () => {
  t = await startTestDb();
});
afterAll(async () => t.close());

const options = { leaseMs: 10_000, acquireTimeoutMs: 0 };

describe("transcript under the writer claim (dynalite)", () => {
  it("appends turns in order and reads only committed entries", async () => {
    const claim = await claimWriter(t.db, "s1", "run-a", options);
    const afterUser = await appendTurn(t.db, claim, [{ role: "user", content: "hi" }]);
    await appendTurn(t.db, afterUser, [reply("hello")]);
    await releaseWriter(t.db, claim);
    const entries = await readTranscript(t.db, "s1");
    expect(entries.map((e) => [e.seq, e.message.role])).toEqual([
      [0, "user"],
      [1, "assistant"],
    ]);
    expect(entries.every((e) => e.runId === "run-a" && e.v === 1)).toBe(true);
  });

  it("makes a second writer wait, then report the session busy", async () => {
    const holder = await claimWriter(t.db, "s2", "run-a", options);
    await expect(claimWriter(t.db, "s2", "run-b", { leaseMs: 1000, acquireTimeoutMs: 150 })).rejects.toBeInstanceOf(SessionBusyError);
    await releaseWriter(t.db, holder);
    const next = await claimWriter(t.db, "s2", "run-b", options);
    expect(next.epoch).toBe(holder.epoch + 1);
  });

  it("is not re-entrant unless asked", async () => {
    const first = await claimWriter(t.db, "s3", "run-a", options);
    await expect(claimWriter(t.db, "s3", "run-a", options)).rejects.toBeInstanceOf(SessionBusyError);
    const again = await claimWriter(t.db, "s3", "run-a", { ...options, allowReentrant: true });
    expect(again.epoch).toBe(first.epoch + 1);
  });

  it("takes over an expired lease and fences the old writer out", async () => {
    const old = await claimWriter(t.db, "s4", "run-old", { leaseMs: 1000, acquireTimeoutMs: 0 });
    t.advance(2000);
    const fresh = await claimWriter(t.db, "s4", "run-new", options);
    await expect(appendTurn(t.db, old, [{ role: "user", content: "zombie" }])).rejects.toBeInstanceOf(WriterFencedError);
    await appendTurn(t.db, fresh, [{ role: "user", content: "alive" }]);
    const entries = await readTranscript(t.db, "s4");
    expect(entries.map((e) => (e.message as { content: string }).content)).toEqual(["alive"]);
  });

  it("rejects a turn that breaks the invariants and writes nothing", async () => {
    const claim = await claimWriter(t.db, "s5", "run-a", options);
    const afterUser = await appendTurn(t.db, claim, [{ role: "user", content: "hi" }]);
    const orphan = { role: "tool_result" as const, toolCallId: "x", toolName: "calculator", content: "1", isError: false };
    await expect(appendTurn(t.db, afterUser, [orphan])).rejects.toBeInstanceOf(TranscriptInvariantError);
    expect(await readTranscript(t.db, "s5")).toHaveLength(1);
  });
});
