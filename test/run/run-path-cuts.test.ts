import { GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { acquireSlot, releaseSlotCounting, slotHolders } from "../../shared/aws/global-lane";
import { keys } from "../../shared/aws/keys";
import { appendEntries, appendTurn, claimWriter, claimWriterWithHistory, readEntries, releaseWriter } from "../../shared/aws/transcript";
import { startHeartbeat } from "../../shared/run/heartbeat";
import { createDynamoToolLedger } from "../../shared/aws/tool-ledger";
import { startTestDb, type TestDb } from "../support/local-db";
import { assistantReply } from "../support/messages";
import { until } from "../support/until";

/**
 * The issue-15 part-3 cuts that replace a read by what a write or another
 * read already returned: each answers what the read it replaced would have.
 */
let t: TestDb;
beforeAll(async () => {
  t = await startTestDb();
});
afterAll(async () => t.close());

const options = { leaseMs: 10_000, acquireTimeoutMs: 0 };
const reply = assistantReply;

describe("claim with history", () => {
  it("gives the same claim as claimWriter plus every committed entry, the last message found behind a note", async () => {
    const first = await claimWriter(t.db, "hist-1", "run-a", options);
    const afterUser = await appendTurn(t.db, first, [{ role: "user", content: "hi" }]);
    const afterReply = await appendTurn(t.db, afterUser, [reply("hello")]);
    // A non-message entry last: the last message is the one before it.
    await appendEntries(t.db, afterReply, [{ kind: "note", note: { type: "session_end", sessionKey: "hist-1", reason: "test" } }]);
    await releaseWriter(t.db, first);

    const plain = await claimWriter(t.db, "hist-1", "run-b", options);
    await releaseWriter(t.db, plain);
    const { claim, entries } = await claimWriterWithHistory(t.db, "hist-1", "run-b", options);
    expect(claim.nextSeq).toBe(plain.nextSeq);
    expect(claim.lastMessage).toEqual(plain.lastMessage);
    expect(claim.lastRunId).toBe(plain.lastRunId);
    expect(claim.epoch).toBe(plain.epoch + 1);
    expect(entries).toEqual(await readEntries(t.db, "hist-1"));
    await releaseWriter(t.db, claim);
  });

  it("an empty transcript: no entries, no last message", async () => {
    const { claim, entries } = await claimWriterWithHistory(t.db, "hist-empty", "run-a", options);
    expect(entries).toEqual([]);
    expect(claim.lastMessage).toBeUndefined();
    expect(claim.nextSeq).toBe(0);
  });
});

describe("global slot release counting", () => {
  it("answers the slots still in use after the release, and undefined for a run that held none", async () => {
    await acquireSlot(t.db, "slot-a", 5);
    await acquireSlot(t.db, "slot-b", 5);
    const before = Object.keys(await slotHolders(t.db)).length;
    expect((await releaseSlotCounting(t.db, "slot-a"))?.inUse).toBe(before - 1);
    expect(Object.keys(await slotHolders(t.db)).length).toBe(before - 1);
    expect(await releaseSlotCounting(t.db, "slot-a")).toBeUndefined();
  });
});

describe("first heartbeat", () => {
  const runningRun = async (runId: string) => {
    await t.db.doc.send(
      new PutCommand({
        TableName: t.db.table,
        Item: { ...keys.run(runId), v: 1, runId, sessionKey: "hb", sessionId: "ses_hb", status: "running", message: "m", acceptedAt: t.db.now(), startedAt: t.db.now(), timeoutMs: 0 },
      }),
    );
  };
  const heartbeatAt = async (runId: string) =>
    ((await t.db.doc.send(new GetCommand({ TableName: t.db.table, Key: keys.run(runId), ConsistentRead: true }))).Item?.heartbeatAt as number | undefined);

  it("waits for the interval when the record shows progress from less than an interval ago", async () => {
    await runningRun("hb-fresh");
    // The real client, with its requests counted: a beat is sent synchronously at start or not at all.
    const sent: string[] = [];
    const counted = { ...t.db, doc: { send: (command: { constructor: { name: string } }) => (sent.push(command.constructor.name), t.db.doc.send(command as never)) } } as unknown as typeof t.db;
    const beat = startHeartbeat(counted, "hb-fresh", 3_600_000, t.db.now());
    beat.stop();
    expect(sent).toEqual([]);
    expect(await heartbeatAt("hb-fresh")).toBeUndefined();
  });

  it("beats at once when the last progress is older than an interval", async () => {
    await runningRun("hb-old");
    const beat = startHeartbeat(t.db, "hb-old", 1_000, t.db.now() - 5_000);
    beat.stop();
    expect(await until(() => heartbeatAt("hb-old"), "the first beat")).toBeGreaterThan(0);
  });
});

describe("release in the last commit (issue 15 part 4)", () => {
  const head = async (sessionId: string) =>
    (await t.db.doc.send(new GetCommand({ TableName: t.db.table, Key: keys.transcriptHead(sessionId), ConsistentRead: true }))).Item;

  it("gives the claim up in the commit, and a later append resumes it with the same epoch when nobody claimed since", async () => {
    const claim = await claimWriter(t.db, "rel-1", "run-a", options);
    const asked = await appendTurn(t.db, claim, [{ role: "user", content: "hi" }]);
    const answered = await appendTurn(t.db, asked, [reply("hello")], [], { release: true });
    expect(answered.released).toBe(true);
    expect((await head("rel-1"))?.writerRunId).toBeUndefined();
    // Nothing left to release: no request.
    const sent: string[] = [];
    const counted = { ...t.db, doc: { send: (command: { constructor: { name: string } }) => (sent.push(command.constructor.name), t.db.doc.send(command as never)) } } as unknown as typeof t.db;
    expect(await releaseWriter(counted, answered)).toBe(true);
    expect(sent).toEqual([]);
    // A revision after the answer: the claim comes back (same epoch), the turn is committed.
    const revised = await appendTurn(t.db, answered, [{ role: "user", content: "again" }]);
    expect(revised.released).toBeUndefined();
    expect(revised.epoch).toBe(claim.epoch);
    expect((await head("rel-1"))?.writerRunId).toBe("run-a");
    expect((await readEntries(t.db, "rel-1")).length).toBe(3);
    await releaseWriter(t.db, revised);
  });

  it("a claim given up and then taken by another writer cannot be resumed: fenced, nothing written", async () => {
    const claim = await claimWriter(t.db, "rel-2", "run-a", options);
    const answered = await appendTurn(t.db, claim, [{ role: "user", content: "hi" }], [], { release: true });
    const other = await claimWriter(t.db, "rel-2", "run-b", options);
    await expect(appendTurn(t.db, answered, [reply("late")])).rejects.toMatchObject({ name: "WriterFencedError" });
    expect((await head("rel-2"))?.writerRunId).toBe("run-b");
    expect((await readEntries(t.db, "rel-2")).length).toBe(1);
    await releaseWriter(t.db, other);
  });

  it("a stale task of the same run (lower epoch) releases neither its successor's claim nor resumes over it", async () => {
    const stale = await claimWriter(t.db, "rel-3", "run-a", { ...options, allowReentrant: true });
    const successor = await claimWriter(t.db, "rel-3", "run-a", { ...options, allowReentrant: true });
    expect(await releaseWriter(t.db, stale)).toBe(false);
    expect((await head("rel-3"))?.writerRunId).toBe("run-a");
    await expect(appendTurn(t.db, { ...stale, released: true }, [{ role: "user", content: "x" }])).rejects.toMatchObject({ name: "WriterFencedError" });
    expect(await releaseWriter(t.db, successor)).toBe(true);
  });
});

describe("pending-turn mark on the run record", () => {
  const counting = () => {
    const sent: string[] = [];
    const db = { ...t.db, doc: { send: (command: { constructor: { name: string } }) => (sent.push(command.constructor.name), t.db.doc.send(command as never)) } } as unknown as typeof t.db;
    return { sent, db };
  };
  const putRun = async (runId: string) =>
    t.db.doc.send(new PutCommand({ TableName: t.db.table, Item: { ...keys.run(runId), v: 1, runId, sessionKey: "pt", sessionId: "ses_pt", status: "running", message: "m", acceptedAt: t.db.now(), timeoutMs: 0 } }));
  const turn = assistantReply("calling");

  it("a run whose record was never marked reads no pending turn; a save marks the record first, and the next attempt finds the turn", async () => {
    await putRun("pt-1");
    const first = counting();
    const unmarked = createDynamoToolLedger(first.db, "pt-1", { retentionDays: 1, runMarked: false });
    expect(await unmarked.loadPendingTurn()).toBeUndefined();
    expect(first.sent).toEqual([]);
    await unmarked.savePendingTurn(turn);
    expect(first.sent).toEqual(["UpdateCommand", "PutCommand"]);
    const record = (await t.db.doc.send(new GetCommand({ TableName: t.db.table, Key: keys.run("pt-1"), ConsistentRead: true }))).Item;
    expect(record?.pendingTurnAt).toBeGreaterThan(0);
    // The next attempt reads the marked record: it looks, finds the turn, and a new save does not mark again.
    const next = counting();
    const marked = createDynamoToolLedger(next.db, "pt-1", { retentionDays: 1, runMarked: true });
    expect((await marked.loadPendingTurn())?.message).toEqual(turn);
    await marked.savePendingTurn(turn);
    expect(next.sent).toEqual(["GetCommand", "PutCommand"]);
  });
});
