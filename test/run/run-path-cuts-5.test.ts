import { GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAttempt, type AttemptParams } from "../../shared/agent/attempt";
import { createUsageMeter } from "../../shared/agent/usage-meter";
import type { Db } from "../../shared/aws/dynamo";
import { eventLogHead, MAX_BATCH_EVENTS } from "../../shared/aws/event-log";
import { keys } from "../../shared/aws/keys";
import { getRun, markRunning } from "../../shared/aws/runs";
import type { Message } from "../../shared/core/messages";
import { NO_SPEND } from "../../shared/core/spend";
import { RunEventEmitter } from "../../shared/events/emitter";
import { admitRun } from "../../shared/lanes/pump";
import { countingTool, RecordingSink, ScriptedProvider, toolMap, user } from "../agent/helpers";
import { LaneHarness } from "../lanes/harness";
import { FakeExecutions, nullPusher, testConfig } from "../lanes/support";
import { startTestDb, type TestDb } from "../support/local-db";

/**
 * Issue 15, stop 19: a release write the next write does anyway, the
 * dispatcher's executionArn write, and the spend counters off the critical
 * path. Each keeps what the write it moved or dropped guaranteed.
 */
let t: TestDb;
beforeAll(async () => {
  t = await startTestDb();
});
afterAll(async () => t?.close());

/** The same table, with every request's command name recorded. */
function counting(db: Db) {
  const sent: string[] = [];
  const doc = { send: (command: { constructor: { name: string } }) => (sent.push(command.constructor.name), db.doc.send(command as never)) };
  return { sent, db: { ...db, doc } as unknown as Db };
}

describe("event log reservation kept for the inline finalize", () => {
  it("a flush that keeps the reservation writes nothing more; the lifecycle end's own write gives it back", async () => {
    const { sent, db } = counting(t.db);
    const emitter = await RunEventEmitter.open({ db, pusher: nullPusher, retentionDays: 1 }, "run-keep-1", "keep-1");
    emitter.emit("lifecycle", { phase: "start", startedAt: 1 });
    // A full batch of text is logged at once, with a reservation to stream on.
    for (let i = 1; i <= MAX_BATCH_EVENTS; i += 1) emitter.emit("assistant", { delta: `w${i} ` });
    await emitter.flush({ keepReservation: true });
    const logged = 1 + MAX_BATCH_EVENTS;
    expect(await eventLogHead(t.db, "run-keep-1")).toEqual({ logged, reservedThrough: logged + MAX_BATCH_EVENTS - 1 });
    expect(sent.filter((name) => name === "UpdateCommand")).toEqual([]);
    emitter.emit("lifecycle", { phase: "end", endedAt: 2, payloads: [], meta: {} });
    await emitter.flush();
    expect(await eventLogHead(t.db, "run-keep-1")).toEqual({ logged: logged + 1, reservedThrough: logged + 1 });
    // Never a release write: the lifecycle end's put gave the reservation back.
    expect(sent.filter((name) => name === "UpdateCommand")).toEqual([]);
  });

  it("a plain flush after a kept one gives the reservation back (the folded step's close when nothing else was logged)", async () => {
    const emitter = await RunEventEmitter.open({ db: t.db, pusher: nullPusher, retentionDays: 1 }, "run-keep-2", "keep-2");
    for (let i = 1; i <= MAX_BATCH_EVENTS; i += 1) emitter.emit("assistant", { delta: `w${i} ` });
    await emitter.flush({ keepReservation: true });
    expect((await eventLogHead(t.db, "run-keep-2")).reservedThrough).toBeGreaterThan(MAX_BATCH_EVENTS);
    await emitter.flush();
    expect(await eventLogHead(t.db, "run-keep-2")).toEqual({ logged: MAX_BATCH_EVENTS, reservedThrough: MAX_BATCH_EVENTS });
  });
});

/** Step Functions whose first execution's ARN is known without a call, like createRunExecutions. */
class ArnKnowingExecutions extends FakeExecutions {
  firstExecutionArn(runId: string): string {
    return `arn:aws:states:us-east-1:000000000000:execution:m:${runId}`;
  }
}

describe("the first execution's ARN", () => {
  it("is not written by the dispatcher when the run start can derive it; markRunning writes it once", async () => {
    const h = new LaneHarness(t.db, testConfig());
    const derived = await h.accept("arn-1", "hello");
    await admitRun({ ...h.deps, executions: new ArnKnowingExecutions() }, (await getRun(t.db, derived.runId))!);
    expect((await getRun(t.db, derived.runId))?.executionArn).toBeUndefined();
    // Where it cannot be derived (a RunExecutions without it), the dispatcher records it as before.
    const recorded = await h.accept("arn-1b", "hello");
    await admitRun({ ...h.deps, executions: new FakeExecutions() }, (await getRun(t.db, recorded.runId))!);
    expect((await getRun(t.db, recorded.runId))?.executionArn).toMatch(new RegExp(`:${recorded.runId}$`));

    const arn = new ArnKnowingExecutions().firstExecutionArn(derived.runId);
    expect(await markRunning(t.db, derived.runId, 5, arn)).toBe(true);
    expect(await getRun(t.db, derived.runId)).toMatchObject({ status: "running", startedAt: 5, executionArn: arn });
    // Once: a redelivered start is refused and changes nothing.
    expect(await markRunning(t.db, derived.runId, 6, arn)).toBe(false);
    expect((await getRun(t.db, derived.runId))?.startedAt).toBe(5);
  });

  it("keeps an ARN already recorded (a re-drive's, written before its execution's start marks the run running)", async () => {
    const runId = "run-arn-redriven";
    const redriven = `arn:aws:states:us-east-1:000000000000:execution:m:${runId}-r1`;
    await t.db.doc.send(
      new PutCommand({
        TableName: t.db.table,
        Item: { ...keys.run(runId), v: 1, runId, sessionKey: "arn-2", sessionId: "ses_arn", status: "queued", message: "m", acceptedAt: 1, timeoutMs: 0, executionArn: redriven },
      }),
    );
    expect(await markRunning(t.db, runId, 7, `arn:aws:states:us-east-1:000000000000:execution:m:${runId}`)).toBe(true);
    const item = (await t.db.doc.send(new GetCommand({ TableName: t.db.table, Key: keys.run(runId), ConsistentRead: true }))).Item;
    expect(item).toMatchObject({ status: "running", executionArn: redriven });
  });
});

describe("spend counters beside the commit", () => {
  function attempt(persist: () => Promise<void>, commitTurn: AttemptParams["commitTurn"]) {
    const meter = createUsageMeter({ budgets: {}, spentBefore: { run: NO_SPEND, session: NO_SPEND }, persist });
    const params: AttemptParams = {
      provider: new ScriptedProvider([{ calls: [{ name: "lookup" }] }, { text: "done" }]),
      model: "m",
      system: "sys",
      history: [user("question")],
      tools: toolMap(countingTool("lookup")),
      commitTurn,
      sink: new RecordingSink(),
      toolContext: { runId: "run1", sessionKey: "s", signal: new AbortController().signal },
      maxToolRounds: 8,
      maxToolResultChars: 4000,
      shouldYield: () => false,
      meter,
    };
    return runAttempt(params);
  }

  it("a turn's commit starts before the call's counters are written, and the attempt reports only once they are", async () => {
    const order: string[] = [];
    let open = 0;
    const result = await attempt(
      async () => {
        open += 1;
        order.push("persist start");
        await new Promise((resolve) => setTimeout(resolve, 20));
        order.push("persist end");
        open -= 1;
      },
      async (turn: Message[]) => {
        order.push(`commit ${turn.length}`);
      },
    );
    expect(result.outcome).toEqual({ kind: "completed" });
    expect(open).toBe(0);
    // The tool turn's commit (assistant + result) went out while its call's counters were still being written;
    // the next model call waited for them.
    expect(order).toEqual(["persist start", "commit 2", "persist end", "persist start", "commit 1", "persist end"]);
  });

  it("a counter write that fails fails the attempt, after the turn it belongs to was committed", async () => {
    const committed: number[] = [];
    await expect(
      attempt(
        async () => {
          throw Object.assign(new Error("throttled"), { name: "ProvisionedThroughputExceededException" });
        },
        async (turn) => {
          committed.push(turn.length);
        },
      ),
    ).rejects.toMatchObject({ name: "ProvisionedThroughputExceededException" });
    // Failed at the next model call: the tool turn is committed, the model was not called again.
    expect(committed).toEqual([2]);
  });

  it("the attempt's own failure is the one thrown when a counter write failed too", async () => {
    await expect(
      attempt(
        async () => {
          throw new Error("counter write failed");
        },
        async () => {
          throw new Error("commit failed");
        },
      ),
    ).rejects.toThrow("commit failed");
  });
});
