import { QueryCommand } from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { putConnection, subscribe } from "../../shared/aws/connections";
import type { Db } from "../../shared/aws/dynamo";
import { appendEvent, lastEventSeq, lastEvents, readEvents, type RunEvent } from "../../shared/aws/event-log";
import { keys } from "../../shared/aws/keys";
import type { FramePusher } from "../../shared/aws/push";
import { RunEventEmitter } from "../../shared/events/emitter";
import { StreamCursor } from "../../shared/protocol/stream-cursor";
import { startTestDb, type TestDb } from "../support/local-db";

/**
 * The event log's batch items (schema v2) on dynalite with a recording
 * pusher: text is sent at once and logged a batch at a time, every seq is
 * logged exactly once across a killed attempt and its retry, and a client
 * that resumes from the log plus the live stream sees no gap.
 */
let t: TestDb;
beforeAll(async () => {
  t = await startTestDb();
});
afterAll(async () => t?.close());

type Sent = { event?: string; payload?: { seq?: number; stream?: string; data?: Record<string, unknown> } };

function recordingPusher() {
  const frames = new Map<string, Sent[]>();
  const pusher: FramePusher = {
    async push(connectionId, frame) {
      frames.set(connectionId, [...(frames.get(connectionId) ?? []), frame as Sent]);
      return "sent";
    },
    async disconnect() {},
  };
  const agentEvents = (connectionId: string) => (frames.get(connectionId) ?? []).filter((f) => f.event === "agent").map((f) => f.payload!);
  return { pusher, agentEvents };
}

/** A db whose requests fail once `kill()` is called: the attempt's Lambda is gone, its pending timer's write never lands. */
function killableDb(db: Db) {
  let dead = false;
  const doc = new Proxy(db.doc, {
    get(target, prop, receiver) {
      if (prop !== "send") return Reflect.get(target, prop, receiver);
      return (command: never) => (dead ? Promise.reject(new Error("the attempt was killed")) : target.send(command));
    },
  });
  return { db: { ...db, doc } as Db, kill: () => (dead = true) };
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((r) => setTimeout(r, 5));
}

async function itemCount(runId: string): Promise<number> {
  const out = await t.db.doc.send(new QueryCommand({ TableName: t.db.table, KeyConditionExpression: "pk = :pk AND begins_with(sk, :ev)", ExpressionAttributeValues: { ":pk": keys.run(runId).pk, ":ev": "EV#" } }));
  return out.Items?.length ?? 0;
}

const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i} `);

describe("batched event log", () => {
  it("sends every text event at once and logs them a batch per item, readable in full and from any cursor", async () => {
    const { pusher, agentEvents } = recordingPusher();
    await putConnection(t.db, "watcher-1");
    await subscribe(t.db, "watcher-1", "batch-1");
    const emitter = await RunEventEmitter.open({ db: t.db, pusher, retentionDays: 1 }, "run-batch-1", "batch-1");
    emitter.emit("lifecycle", { phase: "start", startedAt: 1 });
    let text = "";
    for (const word of words(30)) emitter.emit("assistant", { text: (text += word), delta: word });
    emitter.emit("lifecycle", { phase: "end", endedAt: 2, payloads: [{ text }], meta: {} });
    await emitter.flush();
    const log = await readEvents(t.db, "run-batch-1");
    expect(log.map((e) => e.seq)).toEqual(Array.from({ length: 32 }, (_, i) => i + 1));
    expect(log.filter((e) => e.stream === "assistant").map((e) => e.data.delta).join("")).toBe(words(30).join(""));
    expect(log.at(-2)?.data.text).toBe(text);
    // Fewer items than events: the point of it.
    expect(await itemCount("run-batch-1")).toBeLessThan(log.length / 3);
    expect(agentEvents("watcher-1").map((e) => e.seq)).toEqual(log.map((e) => e.seq));
    // Any cursor, including one inside a batch item, and the cumulative text rebuilt across items.
    for (const after of [0, 1, 7, 15, 16, 17, 30, 32]) expect(await readEvents(t.db, "run-batch-1", after)).toEqual(log.slice(after));
    expect(await readEvents(t.db, "run-batch-1", 5, 4)).toEqual(log.slice(5, 9));
    expect((await lastEvents(t.db, "run-batch-1", 2)).map((e) => e.seq)).toEqual([32, 31]);
    expect(await lastEventSeq(t.db, "run-batch-1")).toBe(32);
  });

  it("keeps reading v1 items (one event each) next to v2 batches", async () => {
    const v1 = (seq: number): RunEvent => ({ v: 1, runId: "run-mixed", sessionKey: "mixed", seq, stream: "lifecycle", ts: seq, data: { phase: "start", startedAt: seq } });
    for (const seq of [1, 2]) expect(await appendEvent(t.db, v1(seq))).toBe(true);
    const { pusher } = recordingPusher();
    const emitter = await RunEventEmitter.open({ db: t.db, pusher, retentionDays: 1 }, "run-mixed", "mixed");
    for (const word of words(5)) emitter.emit("assistant", { delta: word });
    await emitter.flush();
    expect((await readEvents(t.db, "run-mixed")).map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect((await readEvents(t.db, "run-mixed", 1)).map((e) => e.seq)).toEqual([2, 3, 4, 5, 6, 7]);
    expect(await lastEventSeq(t.db, "run-mixed")).toBe(7);
  });
});

describe("a superseded writer (its run re-driven while it ran)", () => {
  it("silenced, it sends and logs nothing more: its pending text is dropped, its retraction never lands after the new writer's text", async () => {
    // Prepare: the old writer streamed; a re-drive's writer opened after it and streams the answer.
    const { pusher, agentEvents } = recordingPusher();
    await putConnection(t.db, "follower-s");
    await subscribe(t.db, "follower-s", "silence-1");
    const old = await RunEventEmitter.open({ db: t.db, pusher, retentionDays: 1 }, "run-silence-1", "silence-1");
    old.emit("lifecycle", { phase: "start", startedAt: 1 });
    old.emit("assistant", { delta: "old " });
    old.emit("assistant", { delta: "pending " });
    await until(() => agentEvents("follower-s").length === 3);
    const redrive = await RunEventEmitter.open({ db: t.db, pusher, retentionDays: 1 }, "run-silence-1", "silence-1");
    redrive.emit("assistant", { delta: "new answer" });
    // Act: the old writer learns it was superseded, then does what an aborted attempt does.
    old.silence();
    old.emit("assistant", { text: "", delta: "", reset: true, reason: "aborted" });
    await old.flush();
    redrive.emit("lifecycle", { phase: "end", endedAt: 2, payloads: [{ text: "new answer" }], meta: {} });
    await redrive.flush();
    // Assess: the old writer's pending text and its retraction were neither logged nor sent.
    const log = await readEvents(t.db, "run-silence-1");
    expect(log.map((e) => e.seq)).toEqual(log.map((_, i) => i + 1));
    expect(log.filter((e) => e.data.reason === "aborted")).toHaveLength(0);
    // The old writer's text was sent within the reservation its start's write kept, and never logged: the
    // re-drive's writer logged those seqs as retractions before its own text.
    expect(log.filter((e) => e.stream === "assistant" && e.data.reset !== true).map((e) => e.data.delta)).toEqual(["new answer"]);
    expect(log.slice(1, 16).every((e) => e.data.reason === "lost")).toBe(true);
    const sent = agentEvents("follower-s");
    expect(sent.filter((e) => e.data?.reason === "aborted")).toHaveLength(0);
    expect(sent.at(-2)).toMatchObject({ stream: "assistant", data: { delta: "new answer" } });
  });
});

describe("a killed attempt between a post and its batch write", () => {
  it("the retry logs the lost seqs as retractions, continues after them, and a resuming client sees no gap", async () => {
    // Prepare: the attempt streams; its text is sent and still unlogged when it is killed.
    const { pusher, agentEvents } = recordingPusher();
    await putConnection(t.db, "follower-k");
    await subscribe(t.db, "follower-k", "kill-1");
    const attempt = killableDb(t.db);
    const first = await RunEventEmitter.open({ db: attempt.db, pusher, retentionDays: 1 }, "run-kill-1", "kill-1");
    first.emit("lifecycle", { phase: "start", startedAt: 1 });
    for (const word of words(4)) first.emit("assistant", { delta: word });
    await until(() => agentEvents("follower-k").length === 5);
    attempt.kill();
    expect(await lastEventSeq(t.db, "run-kill-1")).toBe(1);
    // Act: the retry's emitter (a new task) streams the answer again and ends the run.
    const retry = await RunEventEmitter.open({ db: t.db, pusher, retentionDays: 1 }, "run-kill-1", "kill-1");
    retry.emit("lifecycle", { phase: "start", startedAt: 3 });
    for (const word of words(3)) retry.emit("assistant", { delta: word });
    retry.emit("lifecycle", { phase: "end", endedAt: 4, payloads: [], meta: {} });
    await retry.flush();
    // Assess: one event per seq, no gap, no seq used twice; the lost ones are retractions.
    const log = await readEvents(t.db, "run-kill-1");
    expect(log.map((e) => e.seq)).toEqual(log.map((_, i) => i + 1));
    expect(log[0]).toMatchObject({ stream: "lifecycle", data: { phase: "start" } });
    // seq 1 (the start) was logged with a reservation through 16: the text, 2-16, was sendable unlogged.
    const lost = log.slice(1, 16);
    expect(lost).toHaveLength(15);
    expect(lost.every((e) => e.stream === "assistant" && e.data.reset === true)).toBe(true);
    expect(log.slice(16).map((e) => e.stream)).toEqual(["lifecycle", "assistant", "assistant", "assistant", "lifecycle"]);
    // The follower: what it got live, then a replay from where it is, fed to one cursor.
    const cursor = new StreamCursor();
    const released = [...agentEvents("follower-k"), ...(await readEvents(t.db, "run-kill-1", 0))].flatMap((e) => cursor.accept(e as never));
    expect(cursor.gap()).toBe(false);
    expect(cursor.terminal).toBe(true);
    expect(released.map((e) => e.seq)).toEqual(log.map((e) => e.seq));
    // What it saw live alone is gap-free too: the retry fanned the retractions out.
    const live = new StreamCursor();
    for (const e of agentEvents("follower-k")) live.accept(e as never);
    expect(live.gap()).toBe(false);
    expect(live.terminal).toBe(true);
  });
});

describe("a subscriber that arrives while text is unlogged", () => {
  it("gets the unlogged text re-sent: its replay plus the live stream miss nothing", async () => {
    const { pusher, agentEvents } = recordingPusher();
    const emitter = await RunEventEmitter.open({ db: t.db, pusher, retentionDays: 1 }, "run-join-1", "join-1");
    emitter.emit("lifecycle", { phase: "start", startedAt: 1 });
    for (const word of words(3)) emitter.emit("assistant", { delta: word });
    // The joiner subscribes and reads the log while seqs 2-4 are sent but unlogged.
    await putConnection(t.db, "joiner-1");
    await subscribe(t.db, "joiner-1", "join-1");
    const replayed = await readEvents(t.db, "run-join-1");
    emitter.emit("assistant", { delta: "more " });
    emitter.emit("lifecycle", { phase: "end", endedAt: 2, payloads: [], meta: {} });
    await emitter.flush();
    const cursor = new StreamCursor();
    for (const e of [...replayed, ...agentEvents("joiner-1")]) cursor.accept(e as never);
    expect(cursor.gap()).toBe(false);
    expect(cursor.delivered).toBe(6);
  });

  it("also when no later event comes: the write that logs the text re-sends it", async () => {
    const { pusher, agentEvents } = recordingPusher();
    const emitter = await RunEventEmitter.open({ db: t.db, pusher, retentionDays: 1 }, "run-join-2", "join-2");
    emitter.emit("lifecycle", { phase: "start", startedAt: 1 });
    for (const word of words(3)) emitter.emit("assistant", { delta: word });
    await until(() => true);
    await putConnection(t.db, "joiner-2");
    await subscribe(t.db, "joiner-2", "join-2");
    const replayed = await readEvents(t.db, "run-join-2");
    await emitter.flush();
    const cursor = new StreamCursor();
    for (const e of [...replayed, ...agentEvents("joiner-2")]) cursor.accept(e as never);
    expect(cursor.delivered).toBe(4);
  });
});
