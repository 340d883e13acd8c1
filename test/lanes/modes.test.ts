import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getSession } from "../../shared/aws/sessions";
import { DROPPED_ERROR, QUEUE_FULL_ERROR } from "../../shared/intake/admission";
import { MAX_INLINE_WAIT_MS, pumpLane } from "../../shared/lanes/pump";
import { LaneHarness } from "./harness";
import { Tables, testConfig } from "./support";

let tables: Tables;
beforeAll(async () => {
  tables = await Tables.start();
});
afterAll(async () => tables?.close());

/** A session whose first run is running; returns the harness and that run's id. */
async function busySession(lanes: Record<string, unknown> = {}, sessionKey = "s") {
  const db = await tables.fresh();
  const h = new LaneHarness(db, testConfig({ globalCap: 0, ...lanes }));
  h.executions.clock = () => db.now();
  const first = await h.accept(sessionKey, "first");
  await h.dispatch();
  await h.start(first.runId);
  return { h, db, active: first.runId };
}

describe("queue modes at intake", () => {
  it("steer (the default): answered `steered` into the running run, waiting as a steer entry", async () => {
    const { h, active } = await busySession();
    const answer = await h.accept("s", "also this");
    expect(answer).toMatchObject({ status: "steered", intoRunId: active, queueMode: "steer" });
    expect((await h.lane("s")).waiting).toMatchObject([{ runId: answer.runId, kind: "steer" }]);
  });

  it("steer with nobody taking it: it becomes the follow-up run when the running one ends", async () => {
    const { h, active } = await busySession();
    const steered = await h.accept("s", "late");
    await h.dispatch();
    await h.finish(active);
    expect(h.executions.created).toEqual([active, steered.runId]);
    expect(await h.run(steered.runId)).toMatchObject({ status: "queued", message: "late" });
  });

  it("followup: answered `queued` with its position, runs after", async () => {
    const { h, active } = await busySession({ mode: "followup" });
    const a = await h.accept("s", "a");
    const b = await h.accept("s", "b");
    expect([a.status, a.position, b.status, b.position]).toEqual(["queued", 1, "queued", 2]);
    await h.dispatch();
    expect(await h.drainAll()).toEqual([active, a.runId, b.runId]);
  });

  it("collect: answered `collected`; the burst becomes one follow-up run; each message ends with it", async () => {
    const { h, active } = await busySession({ mode: "collect", debounceMs: 0 });
    const answers = [await h.accept("s", "one"), await h.accept("s", "two"), await h.accept("s", "three")];
    expect(answers.map((a) => a.status)).toEqual(["collected", "collected", "collected"]);
    await h.dispatch();
    await h.finish(active);
    expect(h.executions.created).toEqual([active, answers[0].runId]);
    await h.start(answers[0].runId);
    await h.finish(answers[0].runId);
    for (const a of answers.slice(1)) expect(await h.run(a.runId)).toMatchObject({ status: "ok", mergedInto: answers[0].runId });
  });

  it("collect honours the debounce: a batch younger than it does not start; the pump waits for it", async () => {
    // The table's clock is the lane's clock: the test moves it, so "younger than the debounce" does not
    // depend on how fast this machine gets from the message to the run's end.
    const { h, db, active } = await busySession({ mode: "collect", debounceMs: 60_000 });
    const c = await h.accept("s", "soon");
    await h.dispatch();
    await h.finish(active); // due a minute from now: longer than a pumping Lambda waits inline
    expect(h.executions.created).toEqual([active]);
    expect((await h.lane("s")).activeRunId).toBeUndefined();
    expect(await h.run(c.runId)).toMatchObject({ status: "queued" });

    const dueAt = c.acceptedAt + 60_000;
    db.advance(dueAt - MAX_INLINE_WAIT_MS / 2 - db.now()); // now due within what a pump waits for inline
    await pumpLane(h.deps, "s");
    expect(h.executions.created).toEqual([active, c.runId]);
    expect(h.executions.startedAt.get(c.runId)).toBeGreaterThanOrEqual(dueAt);
  });

  it("interrupt: the running run is asked to stop and the new message runs next, ahead of older follow-ups", async () => {
    const { h, active } = await busySession({ mode: "followup" });
    const older = await h.accept("s", "older");
    const urgent = await h.accept("s", "stop, do this", { queue: { mode: "interrupt" } });
    expect(urgent).toMatchObject({ status: "queued", position: 1, interruptedRunId: active });
    expect((await h.run(active))?.abortReason).toBe("interrupted by a newer message");
    await h.dispatch();
    await h.finish(active, "aborted");
    expect(h.executions.created).toEqual([active, urgent.runId]);
    await h.drainAll();
    expect(h.executions.created).toEqual([active, urgent.runId, older.runId]);
  });

  it("reject: answered `rejected` (busy) at once; nothing is stored or queued", async () => {
    const { h, active } = await busySession({ mode: "reject" });
    const answer = await h.accept("s", "no room", { idempotencyKey: "rej-1" });
    expect(answer).toMatchObject({ status: "rejected", reason: "busy", activeRunId: active });
    expect(await h.run(answer.runId)).toBeUndefined();
    expect((await h.lane("s")).waiting).toEqual([]);
  });
});

describe("per-session cap and drop policies", () => {
  it("summarize: drops the oldest waiting message and hands its one-line summary to the next run", async () => {
    const { h, active } = await busySession({ mode: "followup", cap: 2 });
    const w1 = await h.accept("s", "the oldest message, soon dropped");
    const w2 = await h.accept("s", "second");
    const w3 = await h.accept("s", "third");
    expect(w3.status).toBe("queued");
    expect(await h.run(w1.runId)).toMatchObject({ status: "error", error: DROPPED_ERROR });
    expect((await h.lane("s")).waiting.map((e) => e.runId)).toEqual([w2.runId, w3.runId]);
    await h.dispatch();
    await h.finish(active);
    const next = await h.run(w2.runId);
    expect(next?.message).toContain("[Queue overflow] 1 earlier message was dropped");
    expect(next?.message).toContain("- the oldest message, soon dropped");
    expect(next?.message.endsWith("second")).toBe(true);
    expect(next?.ownMessage).toBe("second");
  });

  it("old: drops the oldest silently", async () => {
    const { h, active } = await busySession({ mode: "followup", cap: 1, drop: "old" });
    const w1 = await h.accept("s", "dropped");
    const w2 = await h.accept("s", "kept");
    expect(await h.run(w1.runId)).toMatchObject({ status: "error", error: DROPPED_ERROR });
    await h.dispatch();
    await h.finish(active);
    expect(await h.run(w2.runId)).toMatchObject({ message: "kept" });
  });

  it("new: refuses the newest (`rejected`, queue_full) and keeps the queue as it was", async () => {
    const { h } = await busySession({ mode: "followup", cap: 1, drop: "new" });
    const w1 = await h.accept("s", "kept");
    const w2 = await h.accept("s", "refused");
    expect(w2).toMatchObject({ status: "rejected", reason: "queue_full" });
    expect((await h.lane("s")).waiting.map((e) => e.runId)).toEqual([w1.runId]);
    expect(QUEUE_FULL_ERROR).toMatch(/full/);
  });
});

describe("where the mode comes from", () => {
  it("request, then the session's stored settings, then the channel's, then the config", async () => {
    const { h } = await busySession({ mode: "followup", byChannel: { telegram: { mode: "collect" } } });
    expect((await h.accept("s", "x", { channel: "telegram" })).status).toBe("collected");
    expect((await h.accept("s", "x", { channel: "telegram", queue: { mode: "steer" } })).status).toBe("steered");
    await h.accept("s", "store it", { queue: { mode: "reject", scope: "session" } });
    expect((await getSession(h.db, "s"))?.queue).toEqual({ mode: "reject" });
    expect((await h.accept("s", "x", { channel: "telegram" })).status).toBe("rejected");
    expect((await h.accept("s", "x", { queue: { mode: "followup" } })).status).toBe("queued");
    await h.accept("s", "clear it", { queue: { scope: "session" } });
    expect((await getSession(h.db, "s"))?.queue).toBeUndefined();
  });
});
