import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../../shared/aws/dynamo";
import { readEvents } from "../../shared/aws/event-log";
import { getRun, markEndedReturning } from "../../shared/aws/runs";
import { handOffLane } from "../../shared/lanes/handoff";
import { finalizeRun } from "../../shared/run/finalize-run";
import { noteRunForFinalize, withInvocationMemo } from "../../shared/run/invocation-memo";
import type { EdgeCall } from "../../infra/local/aws-edge";
import { startLocalStack } from "../../infra/local/stack";
import { loadAgentConfig } from "../../shared/config/config";
import { chat, FakeOpenAIServer } from "../support/fake-openai-server";
import { TestWsClient } from "../support/ws-client";
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

describe("a clean WebSocket run's end on the local stack (the template's functions)", () => {
  it("the Attempt reads the run record once (its start) and the session lane once (its steering check)", async () => {
    const oai = await FakeOpenAIServer.start();
    const calls: { action: string; body: string }[] = [];
    const onEdgeCall = (call: EdgeCall) => {
      if (/assumed-role\/[^/]*?AttemptFn/.test(call.principalArn ?? "") && call.action === "dynamodb:GetItem") calls.push({ action: call.action, body: call.requestBody.toString("utf8") });
    };
    const config = loadAgentConfig({ OPENAI_API_KEY: "test", OPENAI_BASE_URL: oai.baseURL, MODEL: "openai/gpt-4o" });
    const stack = await startLocalStack({ config, observe: { onEdgeCall } });
    try {
      const client = await TestWsClient.open(stack.webSocketUrl);
      try {
        await client.request("connect", { auth: { token: stack.authToken } });
        oai.enqueue(chat.text("the answer"));
        const accepted = await client.request("agent", { sessionKey: "ends-1", message: "hello", idempotencyKey: "ends-e2e-1" });
        const runId = accepted.payload.runId as string;
        await client.waitFor((f) => f.type === "event" && f.payload?.runId === runId && f.payload?.stream === "lifecycle" && f.payload?.data?.phase === "end");
        await stack.idle();
        // Whole-record reads (the abort watch's projected read of two flags is not one).
        const runReads = calls.filter((c) => c.body.includes(`"RUN#${runId}"`) && c.body.includes('"RUN"') && !c.body.includes("ProjectionExpression"));
        expect(runReads).toHaveLength(1);
        expect(calls.filter((c) => c.body.includes('"LANE#ends-1"'))).toHaveLength(1);
      } finally {
        await client.close();
      }
    } finally {
      await stack.close();
      await oai.close();
    }
  });
});
