/**
 * "A dispatcher crash between any two of its writes must be safe": each
 * path that writes is run once to count its writes, then, for every k, run
 * with the process dying right before write k and run again from the start
 * (SQS redelivers the message; Step Functions retries run-finalize). The
 * world must end exactly as after a clean run: one execution per run, the
 * lane consistent, nothing lost, nothing folded twice.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { slotHolders } from "../../shared/aws/global-lane";
import { getRun } from "../../shared/aws/runs";
import { listRegisteredLanes } from "../../shared/aws/lane-registry";
import type { Db } from "../../shared/aws/dynamo";
import { LaneHarness } from "./harness";
import { crashingDb, InjectedCrash, Tables, testConfig } from "./support";

let tables: Tables;
beforeAll(async () => {
  tables = await Tables.start();
});
afterAll(async () => tables?.close());

interface Case {
  h: LaneHarness;
  ids: Record<string, string>;
}

/**
 * Runs `step` on a fresh world for every crash point, then again cleanly,
 * and checks the result. Returns how many writes the step makes.
 */
async function everyCrashPoint(
  prepare: (h: LaneHarness) => Promise<Record<string, string>>,
  step: (c: Case, db: Db) => Promise<unknown>,
  check: (c: Case) => Promise<void>,
  lanes: Record<string, unknown> = {},
): Promise<number> {
  const world = async (): Promise<Case> => {
    const h = new LaneHarness(await tables.fresh(), testConfig({ globalCap: 0, ...lanes }));
    return { h, ids: await prepare(h) };
  };
  const clean = await world();
  const counter = crashingDb(clean.h.db, Number.POSITIVE_INFINITY);
  await step(clean, counter);
  await check(clean);
  const writes = counter.writes();
  for (let k = 1; k <= writes; k += 1) {
    const c = await world();
    await expect(step(c, crashingDb(c.h.db, k)), `crash before write ${k}`).rejects.toBeInstanceOf(InjectedCrash);
    await step(c, c.h.db); // redelivery / retry
    await step(c, c.h.db); // and once more: a duplicate delivery
    await check(c);
  }
  return writes;
}

const followup = { queue: { mode: "followup" as const } };

describe("crash between any two writes", () => {
  it("dispatcher admission: the first run starts once, the others stay queued in order", async () => {
    const writes = await everyCrashPoint(
      async (h) => {
        const a = await h.accept("s", "a", followup);
        const b = await h.accept("s", "b", followup);
        const c = await h.accept("s", "c", followup);
        return { a: a.runId, b: b.runId, c: c.runId };
      },
      // A crashed delivery stays in the queue: the harness retries from that message on.
      ({ h }, db) => h.dispatch(db),
      async ({ h, ids }) => {
        expect(h.executions.created).toEqual([ids.a]);
        const lane = await h.lane("s");
        expect(lane.activeRunId).toBe(ids.a);
        expect(lane.waiting.map((e) => e.runId)).toEqual([ids.b, ids.c]);
        expect((await getRun(h.db, ids.a))?.executionArn).toBeDefined();
      },
    );
    expect(writes).toBeGreaterThanOrEqual(3);
  });

  it("StartExecution failing after the claim: the redelivery starts it, once", async () => {
    const h = new LaneHarness(await tables.fresh(), testConfig({ globalCap: 0 }));
    const a = await h.accept("s", "a", followup);
    h.executions.failNext = 1;
    await expect(h.dispatch()).rejects.toThrow("injected StartExecution failure");
    await h.dispatch();
    await h.dispatch();
    expect(h.executions.created).toEqual([a.runId]);
  });

  it("hand-off at a run's end: the next run starts once, the rest stay queued", async () => {
    await everyCrashPoint(
      async (h) => {
        const ids = { a: (await h.accept("s", "a", followup)).runId, b: (await h.accept("s", "b", followup)).runId, c: (await h.accept("s", "c", followup)).runId };
        await h.dispatch();
        await h.start(ids.a);
        return ids;
      },
      ({ h, ids }, db) => h.finish(ids.a, "ok", db),
      async ({ h, ids }) => {
        expect(h.executions.created).toEqual([ids.a, ids.b]);
        const lane = await h.lane("s");
        expect(lane.activeRunId).toBe(ids.b);
        expect(lane.waiting.map((e) => e.runId)).toEqual([ids.c]);
      },
    );
  });

  it("collect: the batch is folded into one run exactly once, whatever write was interrupted", async () => {
    await everyCrashPoint(
      async (h) => {
        const a = await h.accept("s", "running", followup);
        await h.dispatch();
        await h.start(a.runId);
        const collect = { queue: { mode: "collect" as const, debounceMs: 0 } };
        return {
          a: a.runId,
          c1: (await h.accept("s", "one", collect)).runId,
          c2: (await h.accept("s", "two", collect)).runId,
          c3: (await h.accept("s", "three", collect)).runId,
        };
      },
      ({ h, ids }, db) => h.finish(ids.a, "ok", db),
      async ({ h, ids }) => {
        expect(h.executions.created).toEqual([ids.a, ids.c1]);
        const carrier = await getRun(h.db, ids.c1);
        expect(carrier?.batch).toEqual([ids.c2, ids.c3]);
        expect(carrier?.ownMessage).toBe("one");
        expect(carrier?.message.match(/Queued #\d/g)).toEqual(["Queued #1", "Queued #2", "Queued #3"]);
        for (const id of [ids.c2, ids.c3]) expect(await getRun(h.db, id)).toMatchObject({ status: "collected", mergedInto: ids.c1 });
        const lane = await h.lane("s");
        expect(lane.activeRunId).toBe(ids.c1);
        expect(lane.waiting).toEqual([]);
        expect(lane.pending).toBeUndefined();
      },
    );
  });

  it("global lane: a freed slot goes to the waiting run exactly once", async () => {
    await everyCrashPoint(
      async (h) => {
        const ids = { a: (await h.accept("g1", "a")).runId, b: (await h.accept("g2", "b")).runId, c: (await h.accept("g3", "c")).runId };
        await h.dispatch();
        await h.start(ids.a);
        return ids;
      },
      ({ h, ids }, db) => h.finish(ids.a, "ok", db),
      async ({ h, ids }) => {
        expect(h.executions.created).toEqual([ids.a, ids.b]);
        expect(Object.keys(await slotHolders(h.db))).toEqual([ids.b]);
      },
      { globalCap: 1 },
    );
  });

  it("intake into a lane never used before: the repeat after a crash leaves the lane registered for the sweeper", async () => {
    await everyCrashPoint(
      async () => ({}),
      async ({ h }, db) => {
        await (await import("../../shared/intake/intake")).acceptRun({ ...h.deps, db }, { sessionKey: "fresh", message: "first", idempotencyKey: "idem-2" }, "rest");
      },
      async ({ h }) => {
        // Its entry is written beside the queue send; a repeat that finds the message waiting writes it.
        expect((await listRegisteredLanes(h.db)).map((entry) => entry.sessionKey)).toEqual(["fresh"]);
        expect((await h.lane("fresh")).waiting).toHaveLength(1);
        await h.dispatch();
        await h.drainAll();
        expect(h.executions.created).toHaveLength(1);
      },
    );
  });

  it("intake: a repeated request after a crash finishes the job without a second run", async () => {
    await everyCrashPoint(
      async (h) => ({ first: (await h.accept("s", "busy", followup)).runId }),
      async ({ h }, db) => {
        await (await import("../../shared/intake/intake")).acceptRun(
          { ...h.deps, db },
          { sessionKey: "s", message: "retry me", idempotencyKey: "idem-1", ...followup },
          "rest",
        );
      },
      async ({ h, ids }) => {
        const lane = await h.lane("s");
        const entries = lane.waiting.map((e) => e.runId);
        expect(entries.filter((id) => id !== ids.first)).toHaveLength(1);
        await h.dispatch();
        await h.drainAll();
        expect(h.executions.created).toHaveLength(2);
        expect(new Set(h.executions.created).size).toBe(2);
      },
    );
  });
});
