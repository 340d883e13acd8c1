import type { Context } from "aws-lambda";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDispatcherHandler } from "../../functions/dispatcher/app";
import type { Db } from "../../shared/aws/dynamo";
import { acquireSlot, addGlobalWaiter, GLOBAL_LANE, globalLaneHead, priorityRank, type GlobalWaiter } from "../../shared/aws/global-lane";
import { keys } from "../../shared/aws/keys";
import { getItemsTogether } from "../../shared/aws/read-together";
import { eventLogHead, readEvents } from "../../shared/aws/event-log";
import { RunEventEmitter } from "../../shared/events/emitter";
import type { AppDeps } from "../../shared/runtime/app-deps";
import type { EdgeCall } from "../../infra/local/aws-edge";
import { cleanWsRun } from "../support/clean-ws-run";
import { PRIORITY } from "../../shared/core/queue-settings";
import { LaneHarness } from "../lanes/harness";
import { nullPusher, sqsRecord, Tables, testConfig } from "../lanes/support";

/**
 * Issue 15, stop 20: reads needed together in one request. The global lane's
 * holders and first waiter in one Query (the dispatcher's admission and the
 * pump's steps: a GetItem and a Query before); an admission's run, lane and
 * session in one BatchGetItem (intake: two or three GetItems before; the
 * dispatcher: two). Same answers, same read units.
 */
let tables: Tables;
beforeAll(async () => {
  tables = await Tables.start();
});
afterAll(async () => tables?.close());

/** The same table, with the key of every request on the global lane's partition recorded. */
function countingLaneReads(db: Db) {
  const reads: string[] = [];
  const doc = {
    send: (command: { constructor: { name: string }; input: { Key?: { pk?: string }; ExpressionAttributeValues?: Record<string, unknown> } }) => {
      const pk = command.input.Key?.pk ?? command.input.ExpressionAttributeValues?.[":pk"];
      if (typeof pk === "string" && pk.startsWith("GLANE#") && (command.constructor.name === "GetCommand" || command.constructor.name === "QueryCommand")) reads.push(command.constructor.name);
      return db.doc.send(command as never);
    },
  };
  return { reads, db: { ...db, doc } as unknown as Db };
}

const waiter = (runId: string, priority: number, acceptedAt: number): GlobalWaiter => ({ runId, sessionKey: `s-${runId}`, priority, acceptedAt });

describe("globalLaneHead", () => {
  it("answers no holders and no waiter on an empty lane", async () => {
    expect(await globalLaneHead(await tables.fresh())).toEqual({ holders: {} });
  });

  it("answers the first waiter by priority, then acceptance, when nobody holds a slot (no SLOTS item yet)", async () => {
    const db = await tables.fresh();
    await addGlobalWaiter(db, waiter("late-normal", PRIORITY.normal, 20));
    await addGlobalWaiter(db, waiter("early-background", PRIORITY.background, 10));
    await addGlobalWaiter(db, waiter("early-normal", PRIORITY.normal, 15));
    const { waitersUntil, ...head } = await globalLaneHead(db);
    expect(head).toEqual({ holders: {}, firstWaiter: waiter("early-normal", PRIORITY.normal, 15) });
    // (Each waiter marks the lane first: run-path-cuts-10.)
    expect(waitersUntil).toBeGreaterThan(db.now());
  });

  it("answers the holders with the first waiter, and the holders alone when nobody waits", async () => {
    const db = await tables.fresh();
    expect((await acquireSlot(db, "holder-1", 2)).outcome).toBe("acquired");
    expect(Object.keys((await globalLaneHead(db)).holders)).toEqual(["holder-1"]);
    expect((await globalLaneHead(db)).firstWaiter).toBeUndefined();
    await addGlobalWaiter(db, waiter("waiting-1", PRIORITY.normal, 30));
    const head = await globalLaneHead(db);
    expect(Object.keys(head.holders)).toEqual(["holder-1"]);
    expect(head.firstWaiter).toEqual(waiter("waiting-1", PRIORITY.normal, 30));
  });
});

describe("one read of the global lane per admission", () => {
  it("a run admitted to a free lane does not read the lane (run-path-cuts-10); one that must wait reads it once", async () => {
    const base = await tables.fresh();
    const h = new LaneHarness(base, testConfig({ globalCap: 1 }));
    const first = await h.accept("a", "first");
    const counted = countingLaneReads(base);
    await h.dispatch(counted.db);
    expect(h.executions.created).toEqual([first.runId]);
    expect(counted.reads).toEqual([]);

    // The lane is full now: the next session's run waits, after one read of the lane.
    await h.start(first.runId);
    const second = await h.accept("b", "second");
    counted.reads.length = 0;
    await h.dispatch(counted.db);
    expect(h.executions.created).toEqual([first.runId]);
    expect(counted.reads[0]).toBe("QueryCommand");
    expect(counted.reads.filter((name) => name === "GetCommand")).toEqual([]);

    // The holder's end hands its slot to the waiting run, as before.
    await h.finish(first.runId);
    expect(h.executions.created).toEqual([first.runId, second.runId]);
  });
});

/** The same table, with every command's name recorded and, while `unprocess` > 0, one answered BatchGetItem item moved to UnprocessedKeys. */
function batchObserving(db: Db) {
  const sent: string[] = [];
  const state = { unprocess: 0 };
  const doc = {
    send: async (command: { constructor: { name: string } }) => {
      sent.push(command.constructor.name);
      const out = (await db.doc.send(command as never)) as { Responses?: Record<string, Record<string, unknown>[]>; UnprocessedKeys?: Record<string, { Keys: unknown[] }> };
      const answered = out.Responses?.[db.table];
      if (command.constructor.name === "BatchGetCommand" && state.unprocess > 0 && answered && answered.length > 0) {
        // What DynamoDB does under throttling: part of the batch answered, the rest handed back without an error.
        state.unprocess -= 1;
        const [held, ...rest] = answered;
        return { ...out, Responses: { [db.table]: rest }, UnprocessedKeys: { [db.table]: { Keys: [{ pk: held!.pk, sk: held!.sk }], ConsistentRead: true } } };
      }
      return out;
    },
  };
  return { sent, state, db: { ...db, doc } as unknown as Db };
}

describe("getItemsTogether", () => {
  it("answers every key in the order asked, a missing item as undefined, a key named twice once", async () => {
    const db = await tables.fresh();
    await addGlobalWaiter(db, waiter("w1", PRIORITY.normal, 1));
    const waiterKey = keys.globalWaiter(GLOBAL_LANE, priorityRank(PRIORITY.normal), 1, "w1");
    const observed = batchObserving(db);
    const items = await getItemsTogether(observed.db, [keys.run("absent"), waiterKey, waiterKey]);
    expect(items.map((item) => item?.runId)).toEqual([undefined, "w1", "w1"]);
    expect(observed.sent).toEqual(["BatchGetCommand"]);
  });

  it("asks again for what DynamoDB left unprocessed, and fails like a throttled read when it never comes", async () => {
    const db = await tables.fresh();
    await addGlobalWaiter(db, waiter("w1", PRIORITY.normal, 1));
    await addGlobalWaiter(db, waiter("w2", PRIORITY.normal, 2));
    const wanted = [keys.globalWaiter(GLOBAL_LANE, 1, 1, "w1"), keys.globalWaiter(GLOBAL_LANE, 1, 2, "w2")];
    const observed = batchObserving(db);
    observed.state.unprocess = 1;
    expect((await getItemsTogether(observed.db, wanted)).map((item) => item?.runId)).toEqual(["w1", "w2"]);
    expect(observed.sent).toEqual(["BatchGetCommand", "BatchGetCommand"]);

    observed.state.unprocess = 99;
    const error = await getItemsTogether(observed.db, wanted).catch((e: unknown) => e);
    expect((error as Error).name).toBe("ProvisionedThroughputExceededException");
  });
});

describe("an admission's reads in one request", () => {
  it("intake reads the run, the lane and the session with one BatchGetItem; a repeat finds its run in it", async () => {
    const base = await tables.fresh();
    const observed = batchObserving(base);
    const h = new LaneHarness(observed.db, testConfig());
    const first = await h.accept("one-read", "hello", { idempotencyKey: "one-read-1" });
    const reads = observed.sent.filter((name) => name === "GetCommand" || name === "BatchGetCommand");
    expect(reads).toEqual(["BatchGetCommand"]);
    expect(first.status).not.toBe("rejected");

    observed.sent.length = 0;
    const again = await h.accept("one-read", "hello", { idempotencyKey: "one-read-1" });
    expect(again.runId).toBe(first.runId);
    expect(again.duplicate).toBe(true);
    // (Where its message is now is read afresh after that, as before: currentAnswer.)
    expect(observed.sent[0]).toBe("BatchGetCommand");
    expect(observed.sent).not.toContain("PutCommand");
  });

  it("the dispatcher reads the run and its lane with one BatchGetItem", async () => {
    const base = await tables.fresh();
    const h = new LaneHarness(base, testConfig());
    const accepted = await h.accept("disp-one", "hello");
    const observed = batchObserving(base);
    const deps = { ...h.with(observed.db), runtime: {} } as unknown as AppDeps;
    const response = await createDispatcherHandler(deps)({ Records: [sqsRecord("m-1", "disp-one", JSON.stringify({ v: 1, runId: accepted.runId }))] }, {} as Context);
    expect(response.batchItemFailures).toEqual([]);
    expect(h.executions.created).toEqual([accepted.runId]);
    expect(observed.sent.filter((name) => name === "GetCommand" || name === "BatchGetCommand")).toEqual(["BatchGetCommand"]);
  });
});


describe("a clean WebSocket run's reads on the local stack (the template's functions)", () => {
  it("ws-api reads the run, lane and session in one request before it subscribes; the dispatcher reads run and lane in one, the global lane in none; the run start does not read the empty event log", async () => {
    const calls: { fn: string; action: string; body: string }[] = [];
    const onEdgeCall = (call: EdgeCall) => {
      const fn = /assumed-role\/[^/]*?(WsApi|Dispatcher|Attempt)Fn/.exec(call.principalArn ?? "")?.[1];
      if (fn && call.action.startsWith("dynamodb:")) calls.push({ fn, action: call.action, body: call.requestBody.toString("utf8") });
    };
    // Only the `agent` request's calls (not the connect's key and connection reads).
    await cleanWsRun({ sessionKey: "reads-1", idempotencyKey: "reads-e2e-1" }, onEdgeCall, () => {
      calls.length = 0;
    });
    const of = (fn: string) => calls.filter((c) => c.fn === fn);
    const wsReads = of("WsApi").filter((c) => c.action === "dynamodb:GetItem" || c.action === "dynamodb:BatchGetItem");
    // Besides the connection record (who is calling), the intake's reads in one request: none of them alone.
    const batches = wsReads.filter((c) => c.action === "dynamodb:BatchGetItem");
    expect(batches).toHaveLength(1);
    for (const item of ["RUN#", "LANE#reads-1", "SESSION#reads-1"]) expect(batches[0]!.body).toContain(item);
    expect(wsReads.filter((c) => c.action === "dynamodb:GetItem" && !c.body.includes("CONN#"))).toEqual([]);
    // The batch comes before the subscription is written (the tenant check is made on it).
    const ws = of("WsApi");
    const subscription = ws.findIndex((c) => c.action === "dynamodb:PutItem" && c.body.includes("SUBS#reads-1"));
    expect(subscription).toBeGreaterThan(ws.indexOf(batches[0]!));
    const dispatcherReads = of("Dispatcher").filter((c) => c.action === "dynamodb:GetItem" || c.action === "dynamodb:BatchGetItem" || c.action === "dynamodb:Query");
    // The global lane's slot is a conditional write that holds when nobody waits (run-path-cuts-10): no read of the lane.
    expect(dispatcherReads.map((c) => c.action)).toEqual(["dynamodb:BatchGetItem"]);
    // The attempt that started the run logged its events without reading the log's head first.
    const logHeadReads = of("Attempt").filter((c) => c.action === "dynamodb:Query" && c.body.includes('"EV#"'));
    expect(logHeadReads).toEqual([]);
    expect(of("Attempt").filter((c) => c.action === "dynamodb:PutItem" && c.body.includes("EV#000000000001")).length).toBe(1);
  });
});

describe("the emitter of a run started here", () => {
  it("logs from seq 1 without reading the log; a log someone wrote anyway is never overwritten: the event goes after it", async () => {
    const db = await tables.fresh();
    const deps = { db, pusher: nullPusher, retentionDays: 1 };
    const fresh = RunEventEmitter.fresh(deps, "run-fresh-1", "fresh-1");
    fresh.emit("lifecycle", { phase: "start", startedAt: 1 });
    await fresh.flush();
    expect(await eventLogHead(db, "run-fresh-1")).toEqual({ logged: 1, reservedThrough: 1 });

    // Another writer logged first (what RunEventEmitter.fresh rules out, tried anyway): its event stays seq 1.
    const other = await RunEventEmitter.open(deps, "run-fresh-2", "fresh-2");
    other.emit("lifecycle", { phase: "error", endedAt: 1, error: "aborted before it started", status: "aborted" });
    await other.flush();
    const late = RunEventEmitter.fresh(deps, "run-fresh-2", "fresh-2");
    late.emit("lifecycle", { phase: "start", startedAt: 2 });
    await late.flush();
    const events = await readEvents(db, "run-fresh-2", 0, 10);
    expect(events.map((e) => [e.seq, e.data.phase])).toEqual([[1, "error"], [2, "start"]]);
  });
});
