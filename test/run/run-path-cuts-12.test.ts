import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GetCommand, PutCommand, DeleteCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { listAttempts, putAttempt, type AttemptRecord } from "../../shared/aws/attempts";
import { keys } from "../../shared/aws/keys";
import type { Db } from "../../shared/aws/dynamo";
import type { FramePusher } from "../../shared/aws/push";
import { acceptRun } from "../../shared/intake/intake";
import { finalizeRun } from "../../shared/run/finalize-run";
import { withInvocationMemo } from "../../shared/run/invocation-memo";
import { LaneHarness } from "../lanes/harness";
import { Tables, testConfig } from "../lanes/support";

/**
 * Issue 15, part 12: a run's answer is not written more often than it is
 * needed. The attempt record held the answer twice (finalText and the text
 * blocks it is the concatenation of), and the mark that the requester got its
 * final `res` was an UpdateItem on the ended run record, billed at the
 * record's size with the answer in it: a 5 KB answer paid 9 + 6 WRU for
 * those two writes. The blocks are stored as their lengths now, and the mark
 * is a small item of its own.
 */
let tables: Tables;
beforeAll(async () => {
  tables = await Tables.start();
});
afterAll(async () => tables?.close());

function attempt(runId: string, textBlocks: string[], finalText = textBlocks.join("")): AttemptRecord {
  return {
    v: 1,
    runId,
    iteration: 1,
    model: "openai/gpt-4o",
    offline: false,
    outcome: { kind: "completed" },
    finalText,
    textBlocks,
    usage: { input: 1, output: 2, cacheRead: 0, cacheWrite: 0 },
    modelTurns: 1,
    toolCalls: 0,
    toolErrors: [],
    startedAt: 1,
    endedAt: 2,
  };
}

async function storedAttempt(db: Db, runId: string) {
  return (await db.doc.send(new GetCommand({ TableName: db.table, Key: keys.attempt(runId, 1) }))).Item!;
}

describe("the attempt record", () => {
  it("stores the answer once: the blocks as their lengths, given back whole when read", async () => {
    const db = await tables.fresh();
    const blocks = ["First part. ", "x".repeat(5000), " ünïcødé 🎉 end"];
    const returned = await putAttempt(db, attempt("r1", blocks));
    const item = await storedAttempt(db, "r1");
    expect(item.textBlocks).toBeUndefined();
    expect(item.textBlockLengths).toEqual(blocks.map((b) => b.length));
    expect(item.finalText).toBe(blocks.join(""));
    expect(returned.textBlocks).toEqual(blocks);
    const [read] = await listAttempts(db, "r1");
    expect(read.textBlocks).toEqual(blocks);
    expect(read.finalText).toBe(blocks.join(""));
  });

  it("an attempt without text reads back with no blocks", async () => {
    const db = await tables.fresh();
    await putAttempt(db, { ...attempt("r2", []), outcome: { kind: "aborted" } });
    expect((await storedAttempt(db, "r2")).textBlockLengths).toEqual([]);
    expect((await listAttempts(db, "r2"))[0].textBlocks).toEqual([]);
  });

  it("blocks that are not finalText's parts are stored as they are", async () => {
    const db = await tables.fresh();
    await putAttempt(db, attempt("r3", ["a", "b"], "something else"));
    const item = await storedAttempt(db, "r3");
    expect(item.textBlocks).toEqual(["a", "b"]);
    expect(item.textBlockLengths).toBeUndefined();
    expect((await listAttempts(db, "r3"))[0]).toMatchObject({ textBlocks: ["a", "b"], finalText: "something else" });
  });

  it("a record written before the lengths (the blocks themselves) still reads", async () => {
    const db = await tables.fresh();
    const { textBlocks: _blocks, ...legacy } = attempt("r4", ["old ", "blocks"]);
    await db.doc.send(new PutCommand({ TableName: db.table, Item: { ...keys.attempt("r4", 1), ...legacy, textBlocks: ["old ", "blocks"] } }));
    expect((await listAttempts(db, "r4"))[0]).toMatchObject({ textBlocks: ["old ", "blocks"], finalText: "old blocks" });
  });
});

function recordingPusher() {
  const finals: string[] = [];
  const pusher: FramePusher = {
    async push(_connectionId, frame) {
      const sent = frame as { type?: string; id?: string };
      if (sent.type === "res" && sent.id) finals.push(sent.id);
      return "sent";
    },
    async disconnect() {},
  };
  return { pusher, finals };
}

/** A running run started by a WebSocket `agent` request (its requester waits for the final `res`). */
async function runningWithRequester() {
  const db = await tables.fresh();
  const h = new LaneHarness(db, testConfig({ globalCap: 0 }));
  const accepted = await acceptRun(h.deps, { sessionKey: "s", message: "hello" }, "ws", { requester: { connectionId: "conn-1", requestId: "req-1" } });
  await h.dispatch();
  await h.start(accepted.runId);
  const { pusher, finals } = recordingPusher();
  const finalize = () => finalizeRun(withInvocationMemo({ ...h.deps, pusher }), { runId: accepted.runId, decision: { action: "finalize", status: "ok", reason: "completed" } });
  return { db, runId: accepted.runId, finals, finalize };
}

const runItem = async (db: Db, runId: string) => (await db.doc.send(new GetCommand({ TableName: db.table, Key: keys.run(runId) }))).Item!;
const repliedItem = async (db: Db, runId: string) => (await db.doc.send(new GetCommand({ TableName: db.table, Key: keys.finalReplied(runId) }))).Item;

describe("the requester's final answer", () => {
  it("is marked on a small item of its own that expires with the run record, not on the record", async () => {
    const { db, runId, finals, finalize } = await runningWithRequester();
    await finalize();
    expect(finals).toEqual(["req-1"]);
    const record = await runItem(db, runId);
    expect(record.finalRepliedAt).toBeUndefined();
    const marker = await repliedItem(db, runId);
    expect(marker).toMatchObject({ v: 1, repliedAt: expect.any(Number) });
    expect(marker!.expiresAt).toBe(record.expiresAt);
  });

  it("a finalize retry after the reply does not post it again; one whose reply was never marked posts it once", async () => {
    const { db, runId, finals, finalize } = await runningWithRequester();
    await finalize();
    await finalize();
    expect(finals).toEqual(["req-1"]);
    // The first try died between its post and its mark: the retry answers.
    await db.doc.send(new DeleteCommand({ TableName: db.table, Key: keys.finalReplied(runId) }));
    await finalize();
    expect(finals).toEqual(["req-1", "req-1"]);
    await finalize();
    expect(finals).toEqual(["req-1", "req-1"]);
  });

  it("a record marked the old way (finalRepliedAt on the record) is not answered again", async () => {
    const { db, runId, finals, finalize } = await runningWithRequester();
    await finalize();
    await db.doc.send(new DeleteCommand({ TableName: db.table, Key: keys.finalReplied(runId) }));
    await db.doc.send(new UpdateCommand({ TableName: db.table, Key: keys.run(runId), UpdateExpression: "SET finalRepliedAt = :t", ExpressionAttributeValues: { ":t": 1 } }));
    await finalize();
    expect(finals).toEqual(["req-1"]);
  });
});
