/**
 * The global lane orders waiting runs by their trigger's priority, then
 * acceptance (docs/lanes.md "Priorities"); an interrupt goes first in its
 * own session lane only (priorityRank caps it at foreground). Checked while
 * looking for the long soak's late run: a session whose messages interrupt
 * each other does not take the free global slot ahead of runs other sessions
 * had waiting longer.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LaneHarness } from "./harness";
import { Tables, testConfig } from "./support";

let tables: Tables;
beforeAll(async () => {
  tables = await Tables.start();
});
afterAll(async () => tables?.close());

describe("global lane priorities", () => {
  it("an interrupting message does not jump other sessions' runs waiting for a global slot", async () => {
    const h = new LaneHarness(await tables.fresh(), testConfig({ globalCap: 2 }));
    // Sessions b and x hold the two slots; a and d wait for one.
    const b1 = await h.accept("b", "first b");
    const x1 = await h.accept("x", "first x");
    await h.dispatch();
    await h.start(b1.runId);
    await h.start(x1.runId);
    const a1 = await h.accept("a", "first a");
    const d1 = await h.accept("d", "first d");
    await h.dispatch();
    expect(h.executions.created).toEqual([b1.runId, x1.runId]);
    // Session b is interrupted by a newer message, accepted after a's and d's runs.
    const b2 = await h.accept("b", "second b", { queue: { mode: "interrupt" } });
    expect(b2.interruptedRunId).toBe(b1.runId);
    await h.dispatch();
    // b's slot goes to a (it waited first); b's interrupt then waits for a slot, behind d.
    await h.finish(b1.runId, "aborted");
    expect(h.executions.created).toEqual([b1.runId, x1.runId, a1.runId]);
    await h.start(a1.runId);
    await h.finish(x1.runId);
    expect(h.executions.created, "d waited longer than b's interrupt").toEqual([b1.runId, x1.runId, a1.runId, d1.runId]);
    await h.start(d1.runId);
    await h.finish(a1.runId);
    expect(h.executions.created).toEqual([b1.runId, x1.runId, a1.runId, d1.runId, b2.runId]);
  });

  it("within a session the interrupt still goes first", async () => {
    const h = new LaneHarness(await tables.fresh(), testConfig({ globalCap: 1 }));
    const first = await h.accept("s", "first");
    await h.dispatch();
    await h.start(first.runId);
    const queued = await h.accept("s", "queued", { queue: { mode: "followup" } });
    const interrupting = await h.accept("s", "interrupting", { queue: { mode: "interrupt" } });
    await h.dispatch();
    await h.finish(first.runId, "aborted");
    expect(h.executions.created).toEqual([first.runId, interrupting.runId]);
    await h.start(interrupting.runId);
    await h.finish(interrupting.runId);
    expect(h.executions.created).toEqual([first.runId, interrupting.runId, queued.runId]);
  });
});
