/** The sweeper re-drives runs whose execution died for an infrastructure reason, then ends them (issue 16). */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getRun } from "../../shared/aws/runs";
import { MAX_REDRIVES } from "../../shared/sweeper/dead-runs";
import { sweep } from "../../shared/sweeper/sweep";
import { LaneHarness } from "./harness";
import { Tables, testConfig } from "./support";

let tables: Tables;
beforeAll(async () => {
  tables = await Tables.start();
});
afterAll(async () => tables?.close());

async function runningRun() {
  const h = new LaneHarness(await tables.fresh(), testConfig({ globalCap: 0 }));
  const executions = Object.assign(h.executions, {
    continueRun: async (name: string) => {
      h.executions.created.push(name);
      h.executions.states.set(name, { status: "RUNNING" as const });
      return { executionArn: `arn:aws:states:us-east-1:000000000000:execution:m:${name}`, alreadyStarted: false };
    },
  });
  const deps = { ...h.deps, executions };
  const { runId } = await h.accept("s", "hello");
  await h.dispatch();
  await h.start(runId);
  return { h, deps, runId };
}

describe("sweeper: executions that died of the service", () => {
  it("re-drives a run whose execution failed with States.Runtime, up to MAX_REDRIVES, then ends it with a clear error", async () => {
    const { h, deps, runId } = await runningRun();
    let current = runId;
    for (let generation = 1; generation <= MAX_REDRIVES; generation += 1) {
      h.executions.states.set(current, { status: "FAILED", error: "States.Runtime", cause: "engine crashed" });
      await sweep(deps);
      current = `${runId}-r${generation}`;
      expect(h.executions.created).toContain(current);
      expect(await getRun(h.db, runId)).toMatchObject({ status: "running", executionArn: expect.stringMatching(new RegExp(`${current}$`)) });
    }
    h.executions.states.set(current, { status: "FAILED", error: "States.Runtime" });
    const report = await sweep(deps);
    expect(report.finalized).toEqual([runId]);
    expect(await getRun(h.db, runId)).toMatchObject({ status: "error", error: expect.stringContaining("States.Runtime") });
  });

  it("re-drives a running run whose execution no longer exists", async () => {
    const { h, deps, runId } = await runningRun();
    h.executions.states.delete(runId);
    await sweep(deps);
    expect(h.executions.created).toContain(`${runId}-r1`);
    expect((await getRun(h.db, runId))?.status).toBe("running");
  });
});
