import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { releaseSlot, slotHolders } from "../../shared/aws/global-lane";
import { pumpGlobalLane } from "../../shared/lanes/global";
import { listRegisteredLanes } from "../../shared/aws/lane-registry";
import { LaneHarness } from "./harness";
import { Tables, testConfig } from "./support";

let tables: Tables;
beforeAll(async () => {
  tables = await Tables.start();
});
afterAll(async () => tables?.close());

const followup = { queue: { mode: "followup" as const } };

async function harness(lanes: Record<string, unknown> = {}) {
  return new LaneHarness(await tables.fresh(), testConfig({ globalCap: 0, ...lanes }));
}

describe("session lane", () => {
  it("runs one message at a time per session, in acceptance order, each end starting the next", async () => {
    // Prepare
    const h = await harness();
    const answers = [];
    for (const text of ["m1", "m2", "m3", "m4"]) answers.push(await h.accept("s", text, followup));
    // Act
    await h.dispatch();
    // Assess
    expect(answers.map((a) => a.status)).toEqual(["accepted", "queued", "queued", "queued"]);
    expect(answers.map((a) => a.position)).toEqual([undefined, 1, 2, 3]);
    expect(h.executions.created).toEqual([answers[0].runId]);
    const done = await h.drainAll();
    expect(done).toEqual(answers.map((a) => a.runId));
    const lane = await h.lane("s");
    expect(lane.activeRunId).toBeUndefined();
    expect(lane.waiting).toEqual([]);
  });

  it("keeps sessions independent", async () => {
    const h = await harness();
    const a = await h.accept("a", "hi", followup);
    const b = await h.accept("b", "hi", followup);
    await h.dispatch();
    expect(h.executions.created).toEqual([a.runId, b.runId]);
  });

  it("is unmoved by duplicate deliveries of the same pointer", async () => {
    const h = await harness();
    const first = await h.accept("s", "one", followup);
    const second = await h.accept("s", "two", followup);
    await h.dispatch();
    h.queue.sent.push(...h.queue.sent); // SQS delivers each again
    await h.dispatch();
    await h.dispatch();
    expect(h.executions.created).toEqual([first.runId]);
    expect((await h.lane("s")).waiting.map((e) => e.runId)).toEqual([second.runId]);
  });

  it("answers a repeated request (same idempotency key) with where its message is, and queues nothing new", async () => {
    const h = await harness();
    await h.accept("s", "busy", followup);
    const first = await h.accept("s", "again", { ...followup, idempotencyKey: "k1" });
    const repeat = await h.accept("s", "again", { ...followup, idempotencyKey: "k1" });
    expect(repeat).toMatchObject({ runId: first.runId, status: "queued", position: 1, duplicate: true });
    expect((await h.lane("s")).waiting.map((e) => e.runId).filter((id) => id === first.runId)).toHaveLength(1);
    expect(h.queue.sent.filter((m) => m.runId === first.runId)).toHaveLength(1);
  });

  it("registers every lane that received work, for the sweeper", async () => {
    const h = await harness();
    await h.accept("reg-1", "x");
    await h.accept("reg-2", "y");
    expect((await listRegisteredLanes(h.db)).map((l) => l.sessionKey).sort()).toEqual(["reg-1", "reg-2"]);
  });
});

describe("priorities", () => {
  it("starts a user message before background work queued earlier in the same session", async () => {
    const h = await harness();
    const active = await h.accept("s", "first", followup);
    const cron = await h.accept("s", "nightly", { ...followup, trigger: "cron" });
    const user = await h.accept("s", "hello", followup);
    expect(user.position).toBe(1); // only the first one: the cron job waits behind it
    await h.dispatch();
    expect(await h.drainAll()).toEqual([active.runId, user.runId, cron.runId]);
  });
});

describe("global lane", () => {
  it("never lets more than `globalCap` runs execute and starts the waiting ones in order as slots free", async () => {
    const h = await harness({ globalCap: 2 });
    const accepted = [];
    for (let i = 0; i < 5; i += 1) accepted.push(await h.accept(`g-${i}`, `run ${i}`));
    await h.dispatch();
    expect(h.executions.created).toEqual(accepted.slice(0, 2).map((a) => a.runId));
    expect(Object.keys(await slotHolders(h.db)).sort()).toEqual(accepted.slice(0, 2).map((a) => a.runId).sort());
    await h.start(accepted[0].runId);
    await h.finish(accepted[0].runId);
    expect(h.executions.created).toEqual(accepted.slice(0, 3).map((a) => a.runId));
    await h.drainAll();
    expect(h.executions.created).toEqual(accepted.map((a) => a.runId));
    expect(await slotHolders(h.db)).toEqual({});
  });

  it("does not let a newcomer take a freed slot ahead of runs already waiting for one", async () => {
    const h = await harness({ globalCap: 1 });
    const a = await h.accept("n-a", "holder");
    const b = await h.accept("n-b", "waiting");
    await h.dispatch();
    await releaseSlot(h.db, a.runId); // the window between a release and its releaser's pump
    const c = await h.accept("n-c", "newcomer");
    await h.dispatch(); // c queues behind b, and its pump hands the free slot to b
    await pumpGlobalLane(h.deps);
    expect(h.executions.created).toEqual([a.runId, b.runId]);
    expect(Object.keys(await slotHolders(h.db))).toEqual([b.runId]);
    expect(c.status).toBe("accepted");
  });

  it("gives a freed slot to the highest priority waiting run", async () => {
    const h = await harness({ globalCap: 1 });
    const holder = await h.accept("p-0", "holder");
    const background = await h.accept("p-1", "background", { trigger: "heartbeat" });
    const webhook = await h.accept("p-2", "webhook", { trigger: "webhook" });
    const user = await h.accept("p-3", "user");
    await h.dispatch();
    expect(await h.drainAll()).toEqual([holder.runId, user.runId, webhook.runId, background.runId]);
  });
});
