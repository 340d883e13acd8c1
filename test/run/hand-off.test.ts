/**
 * The run machine hands an unfinished run to the loop machine (issue 15: a
 * clean run is one state transition). What the hand-off writes, in which
 * order, and what a task of a handed-off or superseded execution does.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { createRun, getRun, recordExecution, type RunRecord } from "../../shared/aws/runs";
import type { RunExecutions } from "../../shared/aws/executions";
import { continuationName, executionMachine, redriveGeneration, runIdOfExecution } from "../../shared/core/execution-names";
import { markRedriven } from "../../shared/aws/abort-flag";
import { startRun } from "../../shared/run/start-run";
import { continueAsNew } from "../../shared/run/loop-effects";
import { currentExecutionName, handedOffAlready, handOff, supersededBy } from "../../shared/run/hand-off";
import { handOffName } from "../../shared/core/execution-names";
import { initialLoopState } from "../../shared/core/run-loop";
import { Tables, runDeps, testConfig } from "../lanes/support";

let tables: Tables;
beforeAll(async () => {
  tables = await Tables.start();
});
afterAll(async () => tables?.close());

const arnOf = (name: string) => `arn:aws:states:us-east-1:000000000000:execution:${executionMachine(name) === "loop" ? "loop" : "run"}:${name}`;

/** StartExecution by name; it reads the run record at the moment of the start. */
function loopExecutions(db: Awaited<ReturnType<Tables["fresh"]>>) {
  const started: { name: string; input: Record<string, unknown>; recordNamed?: string }[] = [];
  const executions: RunExecutions = {
    start: async () => ({ alreadyStarted: false }),
    executionArn: arnOf,
    continueRun: async (name, input) => {
      const run = await getRun(db, String(input.runId));
      const repeated = started.some((s) => s.name === name);
      started.push({ name, input, recordNamed: run?.executionArn });
      return repeated ? { alreadyStarted: true } : { executionArn: arnOf(name), alreadyStarted: false };
    },
  };
  return { executions, started };
}

async function runningRun(db: Awaited<ReturnType<Tables["fresh"]>>, runId: string) {
  const run: RunRecord = {
    v: 1, runId, sessionKey: "s", sessionId: "sess", message: "hi", requestHash: "h", source: "ws",
    status: "running", model: "offline/echo", timeoutMs: 0, acceptedAt: db.now(), startedAt: db.now(),
  };
  await createRun(db, run);
  await recordExecution(db, runId, arnOf(runId));
}

describe("hand-off to the loop machine", () => {
  it("starts the loop execution with the step as its input, then names it on the run", async () => {
    const db = await tables.fresh();
    const { executions, started } = loopExecutions(db);
    const deps = { ...runDeps(db, testConfig()), executions };
    await runningRun(db, "run-a");
    const step = { runId: "run-a", loop: initialLoopState(1), decision: { action: "wait" as const, waitSeconds: 12 } };
    const out = await handOff(deps, "run-a", step);
    expect(out).toEqual({ ...step, handedOff: "run-a-l" });
    // The run machine's execution (still running: this task has not returned) is named until the loop's started.
    expect(started).toEqual([{ name: "run-a-l", input: { runId: "run-a", loop: step.loop, decision: step.decision }, recordNamed: arnOf("run-a") }]);
    expect((await getRun(db, "run-a"))?.executionArn).toBe(arnOf("run-a-l"));
    // A repeat (a retried task) starts nothing new: the name is fixed.
    await handOff(deps, "run-a", step);
    expect(started.map((s) => s.name)).toEqual(["run-a-l", "run-a-l"]);
  });

  it("leaves a continue-as-new alone: the loop head already started the run's next execution", async () => {
    const db = await tables.fresh();
    const { executions, started } = loopExecutions(db);
    const deps = { ...runDeps(db, testConfig()), executions };
    await runningRun(db, "run-b");
    const loop = { ...initialLoopState(1), execution: { ...initialLoopState(1).execution, generation: 1 } };
    const out = await handOff(deps, "run-b", { runId: "run-b", loop, decision: { action: "continue_as_new", generation: 1 } });
    expect(out.handedOff).toBe("run-b-c1");
    expect(started).toEqual([]);
    expect((await getRun(db, "run-b"))?.executionArn).toBe(arnOf("run-b"));
  });

  it("a re-drive's hand-off is named after the re-drive, and every name maps back to its run and machine", () => {
    expect(handOffName("run-c-r1")).toBe("run-c-r1-l");
    const names = ["run-c", "run-c-r1", "run-c-l", "run-c-r1-l", "run-c-c3", "run-c-r1-c2"];
    for (const name of names) expect(runIdOfExecution(name)).toBe("run-c");
    expect(names.map(executionMachine)).toEqual(["run", "run", "loop", "loop", "loop", "loop"]);
    expect(names.map(redriveGeneration)).toEqual([0, 1, 0, 1, 0, 1]);
    expect([continuationName("run-c", { generation: 3 }), continuationName("run-c", { redrive: 1, generation: 2 })]).toEqual(["run-c-c3", "run-c-r1-c2"]);
  });

  it("a re-drive's loop continues as new under the re-drive's name, never into the first chain's closed continuations", async () => {
    const db = await tables.fresh();
    const { executions, started } = loopExecutions(db);
    const deps = { ...runDeps(db, testConfig()), executions };
    // Ended, so the start only builds the loop (it writes nothing for an ended run).
    await runningRun(db, "run-e");
    await db.doc.send(new UpdateCommand({ TableName: db.table, Key: { pk: "RUN#run-e", sk: "RUN" }, UpdateExpression: "SET #s = :ok", ExpressionAttributeNames: { "#s": "status" }, ExpressionAttributeValues: { ":ok": "ok" } }));
    const first = await startRun(deps, "run-e");
    expect(first.loop.execution.redrive).toBeUndefined();
    await markRedriven(db, "run-e", 1);
    const redriven = await startRun(deps, "run-e");
    expect(redriven.loop.execution.redrive).toBe(1);
    // The run's first chain had continued as run-e-c1; the re-drive's loop counts from 0 again.
    await continueAsNew(deps, "run-e", { ...redriven.loop, execution: { ...redriven.loop.execution, generation: 1 } });
    await continueAsNew(deps, "run-e", { ...first.loop, execution: { ...first.loop.execution, generation: 1 } });
    expect(started.map((s) => s.name)).toEqual(["run-e-r1-c1", "run-e-c1"]);
    const handed = await handOff(deps, "run-e-r1", { runId: "run-e", loop: { ...redriven.loop, execution: { ...redriven.loop.execution, generation: 2 } }, decision: { action: "continue_as_new", generation: 2 } });
    expect(handed.handedOff).toBe("run-e-r1-c2");
  });

  it("a run machine task yields to its own hand-off and to a newer re-drive, never to an older name", () => {
    const named = (name?: string) => ({ executionArn: name === undefined ? undefined : arnOf(name) });
    expect(currentExecutionName(named("run-d-r1-l"))).toBe("run-d-r1-l");
    expect(["run-d", "run-d-l", "run-d-r1", "run-d-r1-l", "run-d-r2", "run-d-c4", "run-d-r2-c1"].map(redriveGeneration)).toEqual([0, 0, 1, 1, 2, 0, 2]);
    expect(supersededBy(named(undefined), "run-d")).toBeUndefined();
    expect(supersededBy(named("run-d"), "run-d")).toBeUndefined();
    expect(supersededBy(named("run-d-l"), "run-d")).toBeUndefined();
    // The sweeper re-drove the run: the dead execution's late task must not run an attempt beside it.
    expect(supersededBy(named("run-d-r1"), "run-d")).toBe("run-d-r1");
    expect(supersededBy(named("run-d-r1-l"), "run-d")).toBe("run-d-r1-l");
    // A re-drive's first task may read the record before the sweeper names the re-drive there.
    expect(supersededBy(named("run-d-l"), "run-d-r1")).toBeUndefined();
    expect(handedOffAlready(named("run-d-l"), "run-d")).toBe(true);
    expect(handedOffAlready(named("run-d-r1-l"), "run-d")).toBe(false);
  });
});
