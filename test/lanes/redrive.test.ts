/** The sweeper re-drives runs whose execution died for an infrastructure reason, then ends them (issue 16). */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getRun, recordExecution } from "../../shared/aws/runs";
import { MAX_REDRIVES, onExecutionEnded } from "../../shared/sweeper/dead-runs";
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

  it("counts the re-drive that died from its own name, when its end arrives before the run record names it", async () => {
    const { h, deps, runId } = await runningRun();
    const arn = (name: string) => `arn:aws:states:us-east-1:000000000000:execution:m:${name}`;
    // The record still names the first execution; its re-drive -r1 already died.
    h.executions.states.set(runId, { status: "FAILED", error: "States.Runtime" });
    h.executions.states.set(`${runId}-r1`, { status: "FAILED", error: "States.Runtime" });
    await onExecutionEnded(deps, { name: `${runId}-r1`, executionArn: arn(`${runId}-r1`), status: "FAILED", error: "States.Runtime" });
    expect(h.executions.created).toContain(`${runId}-r2`);
    expect((await getRun(h.db, runId))?.status).toBe("running");
    // And the last allowed re-drive dying ends the run, whatever the record names.
    h.executions.states.set(`${runId}-r${MAX_REDRIVES}`, { status: "FAILED", error: "States.Runtime" });
    expect(await onExecutionEnded(deps, { name: `${runId}-r${MAX_REDRIVES}`, executionArn: arn(`${runId}-r${MAX_REDRIVES}`), status: "FAILED", error: "States.Runtime" })).toBe("finalized");
    expect(await getRun(h.db, runId)).toMatchObject({ status: "error", error: expect.stringContaining("States.Runtime") });
  });
});

describe("sweeper: runs handed to the loop machine", () => {
  it("re-drives a handed-off run in the run machine; a re-drive's own hand-off dying counts as that generation", async () => {
    const { h, deps: base, runId } = await runningRun();
    const arn = (name: string) => `arn:aws:states:us-east-1:000000000000:execution:m:${name}`;
    const namedAtStart: Record<string, string | undefined> = {};
    const deps = {
      ...base,
      executions: Object.assign(base.executions, {
        executionArn: arn,
        continueRun: async (name: string) => {
          namedAtStart[name] = (await getRun(h.db, runId))?.executionArn;
          h.executions.created.push(name);
          h.executions.states.set(name, { status: "RUNNING" as const });
          return { executionArn: arn(name), alreadyStarted: false };
        },
      }),
    };
    // The first attempt handed off: the record names <runId>-l, whose execution dies of the service.
    await recordExecution(h.db, runId, arn(`${runId}-l`));
    h.executions.states.set(runId, { status: "SUCCEEDED" });
    h.executions.states.set(`${runId}-l`, { status: "RUNNING" });
    // The run machine's execution ended as it handed off: the loop's carries on.
    expect(await onExecutionEnded(deps, { name: runId, executionArn: arn(runId), status: "SUCCEEDED" })).toBe("ignored");
    h.executions.states.set(`${runId}-l`, { status: "FAILED", error: "States.Runtime" });
    await onExecutionEnded(deps, { name: `${runId}-l`, executionArn: arn(`${runId}-l`), status: "FAILED", error: "States.Runtime" });
    expect(h.executions.created).toContain(`${runId}-r1`);
    // Started before the record names it (the dead execution is named until then), then named.
    expect(namedAtStart[`${runId}-r1`]).toBe(arn(`${runId}-l`));
    expect((await getRun(h.db, runId))?.executionArn).toBe(arn(`${runId}-r1`));
    // The re-drive handed off too (<runId>-r1-l), and that one dies: the next re-drive is -r2, not -r1 again.
    await recordExecution(h.db, runId, arn(`${runId}-r1-l`));
    h.executions.states.set(`${runId}-r1-l`, { status: "FAILED", error: "States.Runtime" });
    await onExecutionEnded(deps, { name: `${runId}-r1-l`, executionArn: arn(`${runId}-r1-l`), status: "FAILED", error: "States.Runtime" });
    expect(h.executions.created).toContain(`${runId}-r2`);
    expect(await getRun(h.db, runId)).toMatchObject({ status: "running", executionArn: arn(`${runId}-r2`) });
  });
});
