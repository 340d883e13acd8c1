import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { acquireSlot, addGlobalWaiter, globalLaneHead, markWaiters, WAITERS_MARK_MS } from "../../shared/aws/global-lane";
import { PRIORITY } from "../../shared/core/queue-settings";
import { sweep } from "../../shared/sweeper/sweep";
import { putConnection, subscribe, unsubscribe } from "../../shared/aws/connections";
import type { Db } from "../../shared/aws/dynamo";
import { readEvents } from "../../shared/aws/event-log";
import type { FramePusher } from "../../shared/aws/push";
import { RunEventEmitter } from "../../shared/events/emitter";
import { getRun, recordExecution } from "../../shared/aws/runs";
import { readTranscript } from "../../shared/aws/transcript";
import { startRun } from "../../shared/run/start-run";
import { pumpGlobalLane } from "../../shared/lanes/global";
import { LaneHarness } from "../lanes/harness";
import { FakeExecutions, runDeps, Tables, testConfig } from "../lanes/support";
import { oneSlotHeld, watchingLane, type Sent } from "./lane-watch";

/**
 * Issue 15, stop 25: the global lane's waiters mark. A newcomer's slot is one
 * conditional write that holds while nobody waits, and a release lists the
 * waiters only while the mark holds: a clean run no longer queries the lane
 * at its admission nor at its release. A waiter marks before it enqueues, so
 * no release misses it; the mark expires instead of being cleared, and the
 * pumps that leave waiters behind a full lane renew it.
 *
 * And the session's subscription revision is gone: an emitter reads the
 * subscriber list itself after each write that logs an event (the same read
 * unit as the revision's GetItem for a few subscribers), so a subscribe is
 * one write less and a run's first fan-out one read less. And a first
 * execution's start marks the run running before it reads it: the write
 * answers the record.
 */
let tables: Tables;
beforeAll(async () => {
  tables = await Tables.start();
});
afterAll(async () => tables?.close());

const names = (sent: Sent[]) => sent.map((entry) => `${entry.name} ${entry.sk.startsWith("W#") ? "W#" : entry.sk}`);

describe("a clean run's admission and release on the global lane", () => {
  it("are one write each: no read of the lane, no look for waiters", async () => {
    const base = await tables.fresh();
    const h = new LaneHarness(base, testConfig({ globalCap: 2 }));
    // (The lane's very first claim also creates its item.)
    const warm = await h.accept("clean-warm", "hello");
    await h.dispatch();
    await h.start(warm.runId);
    await h.finish(warm.runId);
    const watched = watchingLane(base);
    const first = await h.accept("clean-a", "hello");
    await h.dispatch(watched.db);
    expect(h.executions.created).toEqual([warm.runId, first.runId]);
    expect(names(watched.sent)).toEqual(["UpdateCommand SLOTS"]);

    watched.sent.length = 0;
    await h.start(first.runId);
    await h.finish(first.runId, "ok", watched.db);
    expect(names(watched.sent)).toEqual(["UpdateCommand SLOTS"]);
    expect((await globalLaneHead(base)).holders).toEqual({});
  });
});

describe("a run that waits for a slot", () => {
  it("marks the lane before it enqueues; the release then looks for it and hands it the slot", async () => {
    const { base, h, holder } = await oneSlotHeld(tables, "wait");
    const waiting = await h.accept("wait-b", "second");
    const watched = watchingLane(base);
    await h.dispatch(watched.db);
    expect(h.executions.created).toEqual([holder.runId]);
    const order = names(watched.sent);
    // The refused claim, the head (full), the mark, the waiter's item, its own pump's head.
    expect(order.slice(0, 4)).toEqual(["UpdateCommand SLOTS", "QueryCommand (query)", "UpdateCommand SLOTS", "PutCommand W#"]);
    expect((await globalLaneHead(base)).waitersUntil).toBeGreaterThan(base.now());

    watched.sent.length = 0;
    await h.finish(holder.runId, "ok", watched.db);
    expect(h.executions.created).toEqual([holder.runId, waiting.runId]);
    expect(names(watched.sent).slice(0, 2)).toEqual(["UpdateCommand SLOTS", "QueryCommand (query)"]);
  });

  it("behind a mark that holds long enough, does not write it again (a saturated lane's waiter: as many requests as before the mark)", async () => {
    const { base, h, holder } = await oneSlotHeld(tables, "sat");
    await h.accept("sat-b", "second");
    await h.dispatch();
    const marked = (await globalLaneHead(base)).waitersUntil;
    const third = await h.accept("sat-c", "third");
    const watched = watchingLane(base);
    await h.dispatch(watched.db);
    // The refused claim, the head, the waiter's item, its pump's head: no mark write.
    expect(names(watched.sent)).toEqual(["UpdateCommand SLOTS", "QueryCommand (query)", "PutCommand W#", "QueryCommand (query)"]);
    expect((await globalLaneHead(base)).waitersUntil).toBe(marked);
    await h.finish(holder.runId);
    await h.drainAll();
    expect(h.executions.created).toHaveLength(3);
    expect(h.executions.created.at(-1)).toBe(third.runId);
  });

  it("is started when the holder's release lands between its mark and its enqueue (the waiter's own pump sees the slot)", async () => {
    const { base, h, holder } = await oneSlotHeld(tables, "race");
    const waiting = await h.accept("race-b", "second");
    const watched = watchingLane(base);
    let released = false;
    watched.state.before = async (entry) => {
      if (released || entry.name !== "PutCommand" || !entry.sk.startsWith("W#")) return;
      released = true;
      // The release sees the mark and finds no waiter yet.
      await h.finish(holder.runId);
    };
    await h.dispatch(watched.db);
    expect(released).toBe(true);
    expect(h.executions.created).toEqual([holder.runId, waiting.runId]);
    expect(Object.keys((await globalLaneHead(base)).holders)).toEqual([waiting.runId]);
    expect((await globalLaneHead(base)).firstWaiter).toBeUndefined();
  });

  it("is started when the holder's release lands before its mark (the release saw no mark, the waiter's pump sees the slot)", async () => {
    const { base, h, holder } = await oneSlotHeld(tables, "early");
    const waiting = await h.accept("early-b", "second");
    const watched = watchingLane(base);
    const seen: string[] = [];
    watched.state.before = async (entry) => {
      seen.push(entry.name);
      // Right after the head read that found the lane full: the holder ends before the waiter marks.
      if (seen.length === 3 && entry.name === "UpdateCommand") await h.finish(holder.runId);
    };
    await h.dispatch(watched.db);
    expect(seen.slice(0, 3)).toEqual(["UpdateCommand", "QueryCommand", "UpdateCommand"]);
    expect(h.executions.created).toEqual([holder.runId, waiting.runId]);
    expect((await globalLaneHead(base)).firstWaiter).toBeUndefined();
  });
});

describe("a mark that outlived its waiters", () => {
  it("costs a newcomer one look at the head, and a release one look for waiters, until it expires", async () => {
    const base = await tables.fresh();
    const h = new LaneHarness(base, testConfig({ globalCap: 2 }));
    await markWaiters(base);
    const watched = watchingLane(base);
    const newcomer = await h.accept("stale-a", "hello");
    await h.dispatch(watched.db);
    expect(h.executions.created).toEqual([newcomer.runId]);
    expect(names(watched.sent)).toEqual(["UpdateCommand SLOTS", "QueryCommand (query)", "UpdateCommand SLOTS"]);
    watched.sent.length = 0;
    await h.start(newcomer.runId);
    await h.finish(newcomer.runId, "ok", watched.db);
    expect(names(watched.sent)).toEqual(["UpdateCommand SLOTS", "QueryCommand (query)"]);

    (base as unknown as { advance(ms: number): void }).advance(WAITERS_MARK_MS + 1);
    watched.sent.length = 0;
    const later = await h.accept("stale-b", "hello");
    await h.dispatch(watched.db);
    await h.start(later.runId);
    await h.finish(later.runId, "ok", watched.db);
    expect(h.executions.created).toEqual([newcomer.runId, later.runId]);
    expect(names(watched.sent)).toEqual(["UpdateCommand SLOTS", "UpdateCommand SLOTS"]);
  });
});

describe("waiters behind a full lane", () => {
  it("get the mark renewed by a pump when less than 90 s of it is left, and not before", async () => {
    const { base, h, holder } = await oneSlotHeld(tables, "renew");
    await h.accept("renew-b", "second");
    await h.dispatch();
    const marked = (await globalLaneHead(base)).waitersUntil!;
    const advance = (ms: number) => (base as unknown as { advance(ms: number): void }).advance(ms);

    advance(20_000);
    await pumpGlobalLane(h.deps);
    expect((await globalLaneHead(base)).waitersUntil).toBe(marked);

    advance(20_000);
    await pumpGlobalLane(h.deps);
    const renewed = (await globalLaneHead(base)).waitersUntil!;
    expect(renewed).toBeGreaterThan(marked);
    expect(renewed).toBeGreaterThanOrEqual(base.now() + WAITERS_MARK_MS - 1_000);
  });

  it("are started by the sweeper's pump when the mark expired unrenewed (a release then does not look for them)", async () => {
    const { base, h, holder } = await oneSlotHeld(tables, "expired");
    const waiting = await h.accept("expired-b", "second");
    await h.dispatch();
    (base as unknown as { advance(ms: number): void }).advance(WAITERS_MARK_MS + 1);
    await h.finish(holder.runId);
    expect(h.executions.created).toEqual([holder.runId]);
    // The sweeper's pump (every minute, and at every execution's close in the deployed stack).
    await pumpGlobalLane(h.deps);
    expect(h.executions.created).toEqual([holder.runId, waiting.runId]);
  });
});

/** The table, with every request on a session's subscriptions partition recorded, and an optional hook awaited before a list read. */
function watchingSubscriptions(db: Db) {
  const sent: string[] = [];
  const state: { beforeList?: () => Promise<void> } = {};
  const doc = {
    send: async (command: { constructor: { name: string }; input: { Key?: { pk?: string; sk?: string }; Item?: { pk?: string; sk?: string }; ExpressionAttributeValues?: Record<string, unknown> } }) => {
      const key = command.input.Key ?? command.input.Item;
      const pk = key?.pk ?? command.input.ExpressionAttributeValues?.[":pk"];
      if (typeof pk === "string" && pk.startsWith("SUBS#")) {
        sent.push(`${command.constructor.name} ${key?.sk ?? "(query)"}`);
        const hook = state.beforeList;
        if (hook && command.constructor.name === "QueryCommand") {
          state.beforeList = undefined;
          await hook();
        }
      }
      return db.doc.send(command as never);
    },
  };
  return { sent, state, db: { ...db, doc } as unknown as Db };
}

function seqsPushed() {
  const byConnection = new Map<string, number[]>();
  const pusher: FramePusher = {
    async push(connectionId, frame) {
      const sent = frame as { event?: string; payload?: { seq?: number } };
      if (sent.event === "agent" && sent.payload?.seq !== undefined) byConnection.set(connectionId, [...(byConnection.get(connectionId) ?? []), sent.payload.seq]);
      return "sent";
    },
    async disconnect() {},
  };
  return { pusher, byConnection };
}

describe("subscriptions without a revision", () => {
  it("a subscribe writes its item and the connection's sets, nothing else on the session's partition; an unsubscribe deletes the item", async () => {
    const base = await tables.fresh();
    await putConnection(base, "rev-1");
    const watched = watchingSubscriptions(base);
    await subscribe(watched.db, "rev-1", "norev-a");
    expect(watched.sent).toEqual(["PutCommand CONN#rev-1"]);
    watched.sent.length = 0;
    await unsubscribe(watched.db, "rev-1", "norev-a");
    expect(watched.sent).toEqual(["DeleteCommand CONN#rev-1"]);
  });

  it("a run's fan-outs read the list once per logged write, never a revision", async () => {
    const base = await tables.fresh();
    await putConnection(base, "rev-2");
    await subscribe(base, "rev-2", "norev-b");
    const watched = watchingSubscriptions(base);
    const { pusher, byConnection } = seqsPushed();
    const emitter = RunEventEmitter.fresh({ db: watched.db, pusher, retentionDays: 1 }, "run-norev-b", "norev-b");
    emitter.emit("lifecycle", { phase: "start", startedAt: 1 });
    emitter.emit("assistant", { delta: "hi" });
    emitter.emit("lifecycle", { phase: "end", endedAt: 2, payloads: [], meta: {} });
    await emitter.flush();
    expect(watched.sent).toEqual(["QueryCommand (query)", "QueryCommand (query)"]);
    expect(byConnection.get("rev-2")).toEqual([1, 2, 3]);
  });

  it("a subscription that lands between an event's log write and its fan-out gets the event live; the events before it are in its replay", async () => {
    const base = await tables.fresh();
    await putConnection(base, "rev-old");
    await putConnection(base, "rev-new");
    await subscribe(base, "rev-old", "norev-c");
    const watched = watchingSubscriptions(base);
    const { pusher, byConnection } = seqsPushed();
    const emitter = RunEventEmitter.fresh({ db: watched.db, pusher, retentionDays: 1 }, "run-norev-c", "norev-c");
    emitter.emit("lifecycle", { phase: "start", startedAt: 1 });
    emitter.emit("assistant", { delta: "one " });
    await emitter.flush();
    // The next logged write: the new connection subscribes after the put and before the emitter's list read.
    watched.state.beforeList = async () => {
      await subscribe(base, "rev-new", "norev-c");
    };
    emitter.emit("tool", { phase: "start", name: "lookup", toolCallId: "c1" });
    await emitter.flush();
    expect(watched.state.beforeList).toBeUndefined();
    expect(byConnection.get("rev-new")).toEqual([3]);
    expect(byConnection.get("rev-old")).toEqual([1, 2, 3]);
    // What it did not get live, its replay (the log read after its subscription) has.
    expect((await readEvents(base, "run-norev-c")).map((event) => event.seq)).toEqual([1, 2, 3]);
  });
});

/** Step Functions whose first execution's ARN is known without a call, like createRunExecutions. */
class ArnKnowingExecutions extends FakeExecutions {
  firstExecutionArn(runId: string): string {
    return arnOf(runId);
  }
}
const arnOf = (name: string) => `arn:aws:states:us-east-1:000000000000:execution:m:${name}`;

/** The table, with every read of a run record recorded. */
function watchingRunReads(db: Db) {
  const reads: string[] = [];
  const doc = {
    send: (command: { constructor: { name: string }; input: { Key?: { pk?: string; sk?: string } } }) => {
      if (command.constructor.name === "GetCommand" && command.input.Key?.sk === "RUN") reads.push(String(command.input.Key.pk));
      return db.doc.send(command as never);
    },
  };
  return { reads, db: { ...db, doc } as unknown as Db };
}

describe("a first execution's start", () => {
  async function queuedRun(sessionKey: string) {
    const base = await tables.fresh();
    const h = new LaneHarness(base, testConfig());
    const accepted = await h.accept(sessionKey, "hello");
    await h.dispatch();
    return { base, runId: accepted.runId };
  }

  it("marks the run running without reading it first, and records its execution", async () => {
    const { base, runId } = await queuedRun("first-a");
    const watched = watchingRunReads(base);
    const started = await startRun(runDeps(watched.db, testConfig(), new ArnKnowingExecutions()), runId, undefined, { entry: runId });
    expect(started.ownedBy).toBeUndefined();
    expect(watched.reads).toEqual([]);
    expect(await getRun(base, runId)).toMatchObject({ status: "running", executionArn: arnOf(runId), userEntrySeq: expect.any(Number) });
  });

  it("of an execution the sweeper re-drove meanwhile writes nothing: the run stays for the re-drive", async () => {
    const { base, runId } = await queuedRun("first-b");
    await recordExecution(base, runId, arnOf(`${runId}-r1`));
    const before = await getRun(base, runId);
    expect(before?.status).toBe("accepted");
    const started = await startRun(runDeps(base, testConfig(), new ArnKnowingExecutions()), runId, undefined, { entry: runId });
    expect(started.ownedBy).toBe(`${runId}-r1`);
    const run = await getRun(base, runId);
    expect(run).toEqual(before);
  });

  it("retried (Step Functions ran the task twice) takes the retry's path: one user message, the first start kept", async () => {
    const { base, runId } = await queuedRun("first-c");
    const deps = runDeps(base, testConfig(), new ArnKnowingExecutions());
    await startRun(deps, runId, undefined, { entry: runId });
    const firstStartedAt = (await getRun(base, runId))?.startedAt;
    (base as unknown as { advance(ms: number): void }).advance(5_000);
    const again = await startRun(deps, runId, undefined, { entry: runId });
    expect(again.ownedBy).toBeUndefined();
    const run = await getRun(base, runId);
    expect(run).toMatchObject({ status: "running", startedAt: firstStartedAt });
    const transcript = await readTranscript(base, run!.sessionId);
    expect(transcript.filter((entry) => entry.message.role === "user")).toHaveLength(1);
  });
});

describe("a waiter whose slot another pump already took", () => {
  it("is not started again by a second pump once it runs: the second only removes its item; a taker that died before the start leaves it to the sweeper", async () => {
    const base = await tables.fresh();
    const h = new LaneHarness(base, testConfig({ globalCap: 2 }));
    const holder = await h.accept("held-a", "first");
    const other = await h.accept("held-x", "other");
    await h.dispatch();
    await h.start(holder.runId);
    await h.start(other.runId);
    const waiting = await h.accept("held-b", "second");
    await h.dispatch();
    await h.finish(holder.runId);
    expect(h.executions.created).toEqual([holder.runId, other.runId, waiting.runId]);
    await h.start(waiting.runId);
    // The waiter's item listed again once its run started (an enqueue that read the head before the taker's claim).
    await addGlobalWaiter(base, { runId: waiting.runId, sessionKey: "held-b", priority: PRIORITY.normal, acceptedAt: (await getRun(base, waiting.runId))!.acceptedAt });
    const starts = h.executions.calls;
    await h.finish(other.runId);
    expect(h.executions.calls, "no second StartExecution for a waiter whose slot is held").toBe(starts);
    expect((await globalLaneHead(base)).firstWaiter).toBeUndefined();
    expect(Object.keys((await globalLaneHead(base)).holders)).toEqual([waiting.runId]);

    // A taker killed between its claim and its start: the waiter's slot is held, its item gone, no execution.
    const base2 = await tables.fresh();
    const h2 = new LaneHarness(base2, testConfig({ globalCap: 1 }));
    const first = await h2.accept("died-a", "first");
    await h2.dispatch();
    await h2.start(first.runId);
    const second = await h2.accept("died-b", "second");
    await h2.dispatch();
    await h2.finish(first.runId, "ok");
    // Rewind: the pump's start never happened (as if killed after its claim), and the item is gone.
    h2.executions.created.splice(h2.executions.created.indexOf(second.runId), 1);
    await acquireSlot(base2, second.runId, 1);
    await pumpGlobalLane(h2.deps);
    expect(h2.executions.created).toEqual([first.runId]);
    await sweep({ ...h2.deps });
    expect(h2.executions.created).toEqual([first.runId, second.runId]);
  });
});
