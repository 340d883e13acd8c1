import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../../shared/aws/dynamo";
import { eventLogHead, readEvents } from "../../shared/aws/event-log";
import { putConnection, subscribe } from "../../shared/aws/connections";
import type { FramePusher } from "../../shared/aws/push";
import { RunEventEmitter } from "../../shared/events/emitter";
import { getRun, markEndedReturning } from "../../shared/aws/runs";
import { handOffLane } from "../../shared/lanes/handoff";
import { finalizeRun } from "../../shared/run/finalize-run";
import { noteRunForFinalize, withInvocationMemo } from "../../shared/run/invocation-memo";
import type { EdgeCall } from "../../infra/local/aws-edge";
import { cleanWsRun } from "../support/clean-ws-run";
import { LaneHarness } from "../lanes/harness";
import { Tables, testConfig } from "../lanes/support";

/**
 * Issue 15, stop 24: a clean run's end reads neither its run record nor its
 * session lane again. The inline finalize takes the record its attempt's loop
 * head had, and the lane release starts from the attempt's last lane read;
 * each is checked by the conditional write it feeds, so a stale one costs a
 * read, never a wrong answer.
 */
let tables: Tables;
beforeAll(async () => {
  tables = await Tables.start();
});
afterAll(async () => tables?.close());

const followup = { queue: { mode: "followup" as const } };

/** The same table, with the sort key of every read of a LANE# item recorded. */
function countingLaneReads(db: Db) {
  const reads: string[] = [];
  const doc = {
    send: (command: { constructor: { name: string }; input: { Key?: { pk?: string } } }) => {
      const pk = command.input.Key?.pk;
      if (typeof pk === "string" && pk.startsWith("LANE#") && command.constructor.name === "GetCommand") reads.push(pk);
      return db.doc.send(command as never);
    },
  };
  return { reads, db: { ...db, doc } as unknown as Db };
}

/** A session whose first message runs (its lane claimed, its run marked running). */
async function oneRunning() {
  const db = await tables.fresh();
  const h = new LaneHarness(db, testConfig({ globalCap: 0 }));
  const a = await h.accept("s", "first", followup);
  await h.dispatch();
  await h.start(a.runId);
  return { db, h, a };
}

describe("the lane release after a run, from the lane as last read", () => {
  it("frees the lane without reading it when nothing joined since the read", async () => {
    const { db, h, a } = await oneRunning();
    const seen = await h.lane("s");
    const ended = await markEndedReturning(db, a.runId, { status: "ok", endedAt: db.now() });
    const counted = countingLaneReads(db);
    await handOffLane(h.with(counted.db), a.runId, ended, seen);
    expect(counted.reads).toEqual([]);
    expect((await h.lane("s")).activeRunId).toBeUndefined();
  });

  it("a message that joined after the read is not lost: the refused write reads the lane and the message starts next", async () => {
    const { db, h, a } = await oneRunning();
    const seen = await h.lane("s");
    const b = await h.accept("s", "second", followup);
    await h.dispatch();
    expect(h.executions.created).toEqual([a.runId]);
    const ended = await markEndedReturning(db, a.runId, { status: "ok", endedAt: db.now() });
    const counted = countingLaneReads(db);
    await handOffLane(h.with(counted.db), a.runId, ended, seen);
    expect(counted.reads.length).toBeGreaterThan(0);
    expect(h.executions.created).toEqual([a.runId, b.runId]);
    expect((await h.lane("s")).activeRunId).toBe(b.runId);
  });
});

describe("the inline finalize, from the record its attempt had", () => {
  it("ends the run without reading it", async () => {
    const { db, h, a } = await oneRunning();
    const reads: string[] = [];
    const counting = { ...db, doc: { send: (c: { constructor: { name: string }; input: { Key?: { pk?: string; sk?: string } } }) => {
      if (c.constructor.name === "GetCommand" && c.input.Key?.sk === "RUN") reads.push(String(c.input.Key.pk));
      return db.doc.send(c as never);
    } } } as unknown as Db;
    const deps = withInvocationMemo({ ...h.deps, db: counting });
    noteRunForFinalize(deps, (await getRun(db, a.runId))!);
    const out = await finalizeRun(deps, { runId: a.runId, decision: { action: "finalize", status: "ok", reason: "completed" } });
    expect(out.status).toBe("ok");
    expect(reads).toEqual([]);
    expect((await readEvents(db, a.runId)).map((e) => e.data.phase)).toEqual(["end"]);
  });

  it("a run the sweeper ended meanwhile keeps the sweeper's ending; the refused write reads the record and completes it like a retry", async () => {
    const { db, h, a } = await oneRunning();
    const attemptsRecord = (await getRun(db, a.runId))!;
    // The sweeper's ending wrote the terminal state and died before its lifecycle event.
    await markEndedReturning(db, a.runId, { status: "error", endedAt: db.now(), error: "The run's execution ended.", result: { payloads: [], meta: {} } });
    const deps = withInvocationMemo(h.deps);
    noteRunForFinalize(deps, attemptsRecord);
    const out = await finalizeRun(deps, { runId: a.runId, decision: { action: "finalize", status: "ok", reason: "completed" } });
    expect(out.status).toBe("error");
    const events = await readEvents(db, a.runId);
    expect(events.map((e) => [e.stream, e.data.phase])).toEqual([["lifecycle", "error"]]);
    expect((await h.lane("s")).activeRunId).toBeUndefined();
  });
});

/** The same table, with each event log put's first seq and each request on the subscriptions' partition recorded. */
function countingLogRequests(db: Db) {
  const puts: string[] = [];
  const subscriptionReads: string[] = [];
  const doc = {
    send: (command: { constructor: { name: string }; input: { Key?: { pk?: string }; Item?: { sk?: string }; ExpressionAttributeValues?: Record<string, unknown> } }) => {
      if (command.constructor.name === "PutCommand" && String(command.input.Item?.sk).startsWith("EV#")) puts.push(String(command.input.Item?.sk));
      const pk = command.input.Key?.pk ?? command.input.ExpressionAttributeValues?.[":pk"];
      if (typeof pk === "string" && pk.startsWith("SUBS#")) subscriptionReads.push(command.constructor.name);
      return db.doc.send(command as never);
    },
  };
  return { puts, subscriptionReads, db: { ...db, doc } as unknown as Db };
}

function recordingPusher() {
  const seqs: number[] = [];
  const pusher: FramePusher = {
    async push(_connectionId, frame) {
      const sent = frame as { event?: string; payload?: { seq?: number } };
      if (sent.event === "agent" && sent.payload?.seq !== undefined) seqs.push(sent.payload.seq);
      return "sent";
    },
    async disconnect() {},
  };
  return { pusher, seqs };
}

describe("the event log: text is logged with the event after it", () => {
  it("a start, its text and the end are two items, and the text goes out without a subscriber read", async () => {
    const db = await tables.fresh();
    await putConnection(db, "conn-1");
    await subscribe(db, "conn-1", "log-1");
    const counted = countingLogRequests(db);
    const { pusher, seqs } = recordingPusher();
    const emitter = RunEventEmitter.fresh({ db: counted.db, pusher, retentionDays: 1 }, "run-log-1", "log-1");
    emitter.emit("lifecycle", { phase: "start", startedAt: 1 });
    for (const word of ["one ", "two ", "three "]) emitter.emit("assistant", { delta: word });
    emitter.emit("lifecycle", { phase: "end", endedAt: 2, payloads: [], meta: {} });
    await emitter.flush();
    expect(counted.puts).toEqual(["EV#000000000001", "EV#000000000002"]);
    // The start's and the end's fan-outs read the subscriber list (run-path-cuts-10: no revision item); the text's go to the list as read.
    expect(counted.subscriptionReads).toEqual(["QueryCommand", "QueryCommand"]);
    expect(seqs).toEqual([1, 2, 3, 4, 5]);
    expect((await readEvents(db, "run-log-1")).map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(await eventLogHead(db, "run-log-1")).toEqual({ logged: 5, reservedThrough: 5 });
  });

  it("a tool's events keep a reservation too: the text before and after them rides on the next write", async () => {
    const db = await tables.fresh();
    const counted = countingLogRequests(db);
    const emitter = RunEventEmitter.fresh({ db: counted.db, pusher: recordingPusher().pusher, retentionDays: 1 }, "run-log-2", "log-2");
    emitter.emit("lifecycle", { phase: "start", startedAt: 1 });
    emitter.emit("assistant", { delta: "let me look" });
    emitter.emit("tool", { phase: "start", name: "read", toolCallId: "c1" });
    emitter.emit("tool", { phase: "end", name: "read", toolCallId: "c1" });
    emitter.emit("assistant", { delta: "found it" });
    emitter.emit("lifecycle", { phase: "end", endedAt: 2, payloads: [], meta: {} });
    await emitter.flush();
    // start | text + tool start | tool end | text + end: four items where each event had one (six).
    expect(counted.puts).toEqual(["EV#000000000001", "EV#000000000002", "EV#000000000004", "EV#000000000005"]);
    expect((await readEvents(db, "run-log-2")).map((e) => e.stream)).toEqual(["lifecycle", "assistant", "tool", "tool", "assistant", "lifecycle"]);
  });

  it("a writer that stops after an event without the run's end gives the unused reservation back", async () => {
    const db = await tables.fresh();
    const emitter = RunEventEmitter.fresh({ db, pusher: recordingPusher().pusher, retentionDays: 1 }, "run-log-3", "log-3");
    emitter.emit("lifecycle", { phase: "start", startedAt: 1 });
    await emitter.flush();
    // The next writer (a retry in another task) starts at seq 2, with no lost seqs to fill.
    expect(await eventLogHead(db, "run-log-3")).toEqual({ logged: 1, reservedThrough: 1 });
  });

  it("an emitter of a few events and no text (a pause, a compaction) reserves nothing, so its close writes nothing more", async () => {
    const db = await tables.fresh();
    const updates: string[] = [];
    const counting = { ...db, doc: { send: (c: { constructor: { name: string } }) => {
      if (c.constructor.name === "UpdateCommand") updates.push(c.constructor.name);
      return db.doc.send(c as never);
    } } } as unknown as Db;
    const emitter = await RunEventEmitter.open({ db: counting, pusher: recordingPusher().pusher, retentionDays: 1 }, "run-log-4", "log-4", { streamsText: false });
    emitter.emit("compaction", { phase: "start" });
    emitter.emit("compaction", { phase: "end", willRetry: true, completed: true });
    await emitter.flush();
    expect(updates).toEqual([]);
    expect(await eventLogHead(db, "run-log-4")).toEqual({ logged: 2, reservedThrough: 2 });
  });
});

describe("a clean WebSocket run's end on the local stack (the template's functions)", () => {
  it("the Attempt reads the run record never (its start's write answers it: run-path-cuts-10) and the session lane once (its steering check), and logs its events in two items", async () => {
    const calls: { action: string; body: string }[] = [];
    const puts: string[] = [];
    const runId = await cleanWsRun({ sessionKey: "ends-1", idempotencyKey: "ends-e2e-1" }, (call: EdgeCall) => {
      if (!/assumed-role\/[^/]*?AttemptFn/.test(call.principalArn ?? "")) return;
      if (call.action === "dynamodb:GetItem") calls.push({ action: call.action, body: call.requestBody.toString("utf8") });
      if (call.action === "dynamodb:PutItem") puts.push(call.requestBody.toString("utf8"));
    });
    // Whole-record reads (the abort watch's projected read of two flags is not one).
    const runReads = calls.filter((c) => c.body.includes(`"RUN#${runId}"`) && c.body.includes('"RUN"') && !c.body.includes("ProjectionExpression"));
    expect(runReads).toEqual([]);
    expect(calls.filter((c) => c.body.includes('"LANE#ends-1"'))).toHaveLength(1);
    // The event log: the start, then the answer's text with the lifecycle end (one item, not two).
    expect(puts.filter((body) => body.includes(`"RUN#${runId}"`) && body.includes('"EV#'))).toHaveLength(2);
  });
});
