import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSweeperHandler } from "../../functions/sweeper/app";
import { createLambdaContext } from "../../infra/local/lambda-context";
import { acquireSlot, slotHolders } from "../../shared/aws/global-lane";
import { listRegisteredLanes } from "../../shared/aws/lane-registry";
import { getRun, markEnded, recordExecution, recordHeartbeat } from "../../shared/aws/runs";
import { claimWriter } from "../../shared/aws/transcript";
import { RunEventEmitter } from "../../shared/events/emitter";
import { currentExecution, onExecutionEnded } from "../../shared/sweeper/dead-runs";
import { ABORT_DRAIN_MS, sweep } from "../../shared/sweeper/sweep";
import type { AppDeps } from "../../shared/runtime/app-deps";
import { sampleEvent } from "../support/events";
import { LaneHarness } from "./harness";
import { nullPusher, Tables, testConfig } from "./support";
import { silentLog } from "../../shared/run/deps";

let tables: Tables;
beforeAll(async () => {
  tables = await Tables.start();
});
afterAll(async () => tables?.close());

const followup = { queue: { mode: "followup" as const } };

async function world(lanes: Record<string, unknown> = {}) {
  const db = await tables.fresh();
  const h = new LaneHarness(db, testConfig({ globalCap: 0, ...lanes }));
  return { h, db, deps: { ...h.deps } };
}

/** Two messages in one session; the first one running. */
async function runningWithFollowup(lanes: Record<string, unknown> = {}) {
  const w = await world(lanes);
  const a = await w.h.accept("s", "first", followup);
  const b = await w.h.accept("s", "second", followup);
  await w.h.dispatch();
  await w.h.start(a.runId);
  return { ...w, a: a.runId, b: b.runId };
}

describe("sweeper: a registry larger than one invocation's time", () => {
  it("sweeps the least recently joined lanes first and leaves the rest for the next tick when time runs short", async () => {
    const { h, db, deps } = await world();
    const stuck: Record<string, { a: string; b: string }> = {};
    for (const sessionKey of ["s-old", "s-mid", "s-new"]) {
      const a = await h.accept(sessionKey, "first", followup);
      const b = await h.accept(sessionKey, "second", followup);
      stuck[sessionKey] = { a: a.runId, b: b.runId };
      (db as unknown as { advance(ms: number): void }).advance(1_000);
    }
    await h.dispatch();
    for (const { a } of Object.values(stuck)) {
      await h.start(a);
      await markEnded(db, a, { status: "ok", endedAt: db.now() }); // each run-finalize died before its hand-off
    }
    let starts = 0;
    const first = await sweep(deps, { outOfTime: () => starts++ >= 1 });
    expect(first).toMatchObject({ lanes: 1, deferred: 2, pumped: ["s-old"] });
    expect(h.executions.created).toContain(stuck["s-old"].b);
    expect(h.executions.created).not.toContain(stuck["s-new"].b);
    const second = await sweep(deps);
    expect(second).toMatchObject({ deferred: 0 });
    expect(second.pumped.sort()).toEqual(["s-mid", "s-new"]);
    expect(h.executions.created).toEqual(expect.arrayContaining([stuck["s-mid"].b, stuck["s-new"].b]));
  });
});

describe("sweeper: lanes whose run died", () => {
  it("hands on a lane whose run ended without its hand-off (session.stuck)", async () => {
    const { h, db, deps, a, b } = await runningWithFollowup();
    await markEnded(db, a, { status: "ok", endedAt: db.now() }); // run-finalize died before the hand-off
    const report = await sweep(deps);
    expect(report.diagnostics).toEqual([expect.objectContaining({ kind: "session.stuck", runId: a })]);
    expect(h.executions.created).toEqual([a, b]);
  });

  it("ends a run whose execution failed, with a clear error, and starts the next", async () => {
    const { h, deps, a, b } = await runningWithFollowup();
    h.executions.states.set(a, { status: "FAILED", error: "FinalizeFailed", cause: "run-finalize kept failing" });
    const report = await sweep(deps);
    expect(report.finalized).toEqual([a]);
    expect(await getRun(h.db, a)).toMatchObject({ status: "error", error: expect.stringContaining("FAILED: FinalizeFailed") });
    expect(h.executions.created).toEqual([a, b]);
  });

  it("reacts to an execution stopped from outside at once (the EventBridge status-change trigger)", async () => {
    const { h, deps, a, b } = await runningWithFollowup();
    h.executions.states.set(a, { status: "ABORTED" });
    expect(await onExecutionEnded(deps, { name: a, executionArn: `arn:aws:states:us-east-1:0:execution:m:${a}`, status: "ABORTED" })).toBe("finalized");
    expect(await getRun(h.db, a)).toMatchObject({ status: "aborted" });
    expect(h.executions.created).toEqual([a, b]);
    // A second notice (EventBridge delivers at least once) changes nothing.
    expect(await onExecutionEnded(deps, { name: a, executionArn: `arn:aws:states:us-east-1:0:execution:m:${a}`, status: "ABORTED" })).toBe("handed_off");
    expect(h.executions.created).toEqual([a, b]);
  });

  it("ignores the end of an earlier execution of a run that continued as new", async () => {
    const { h, deps, a } = await runningWithFollowup();
    h.executions.states.set(a, { status: "SUCCEEDED" });
    h.executions.states.set(`${a}-c1`, { status: "RUNNING" });
    expect(await onExecutionEnded(deps, { name: a, executionArn: `x:${a}`, status: "SUCCEEDED" })).toBe("ignored");
    expect((await sweep(deps)).finalized).toEqual([]);
    expect((await getRun(h.db, a))?.status).toBe("running");
  });

  it("follows a re-drive's continuations, not the first chain's", async () => {
    const { h, deps, a } = await runningWithFollowup();
    // The first chain continued as a-c1 and died; re-drive 1 continued as a-r1-c1, which runs now.
    await recordExecution(h.db, a, `arn:aws:states:us-east-1:0:execution:m:${a}-r1`);
    h.executions.states.set(`${a}-c1`, { status: "FAILED" });
    h.executions.states.set(`${a}-r1`, { status: "SUCCEEDED" });
    h.executions.states.set(`${a}-r1-c1`, { status: "RUNNING" });
    expect(await currentExecution(deps, (await getRun(h.db, a))!)).toEqual({ status: "RUNNING" });
    expect(await onExecutionEnded(deps, { name: `${a}-r1`, executionArn: `arn:aws:states:us-east-1:0:execution:m:${a}-r1`, status: "SUCCEEDED" })).toBe("ignored");
    expect((await getRun(h.db, a))?.status).toBe("running");
  });

  it("starts a run that owns its lane but whose execution never started", async () => {
    const w = await world();
    const a = await w.h.accept("s", "first");
    w.h.executions.failNext = 1;
    await expect(w.h.dispatch()).rejects.toThrow();
    expect(w.h.executions.created).toEqual([]);
    await sweep(w.deps);
    expect(w.h.executions.created).toEqual([a.runId]);
  });

  it("starts a collect batch whose debounce ends later than a Lambda would wait", async () => {
    const w = await world({ mode: "collect", debounceMs: 60_000 });
    const a = await w.h.accept("s", "first");
    await w.h.dispatch();
    await w.h.start(a.runId);
    const c = await w.h.accept("s", "later");
    await w.h.finish(a.runId);
    expect(w.h.executions.created).toEqual([a.runId]);
    w.db.advance(60_000);
    await sweep(w.deps);
    expect(w.h.executions.created).toEqual([a.runId, c.runId]);
  });
});

describe("sweeper: stuck-session diagnostics", () => {
  it("reports a long run that still makes progress as long-running, and does nothing else", async () => {
    const { db, deps, a } = await runningWithFollowup();
    db.advance(130_000);
    const emitter = await RunEventEmitter.open({ db, pusher: nullPusher, retentionDays: 1 }, a, "s");
    emitter.emit("assistant", { delta: "still talking" });
    await emitter.flush();
    const report = await sweep(deps, { intervalMs: 60_000 });
    expect(report.diagnostics).toEqual([expect.objectContaining({ kind: "session.long_running", runId: a })]);
    expect(report.aborted).toEqual([]);
  });

  it("counts the attempt's heartbeat as progress: a silent tool call is long-running, not stalled", async () => {
    const { db, deps, a } = await runningWithFollowup();
    // Past the abort threshold (360 s by default) since the start, a beat just now.
    db.advance(490_000);
    expect(await recordHeartbeat(db, a)).toBe(true);
    const report = await sweep(deps, { intervalMs: 60_000 });
    expect(report.diagnostics).toEqual([expect.objectContaining({ kind: "session.long_running", runId: a })]);
    expect(report.aborted).toEqual([]);
    // A run that ended takes no heartbeat.
    await markEnded(db, a, { status: "ok", endedAt: db.now() });
    expect(await recordHeartbeat(db, a)).toBe(false);
  });

  it("warns about a silent run, aborts it past the threshold, and ends it if it does not stop", async () => {
    const { h, db, deps, a, b } = await runningWithFollowup();
    db.advance(125_000);
    expect((await sweep(deps, { intervalMs: 60_000 })).diagnostics).toEqual([expect.objectContaining({ kind: "session.stalled", runId: a })]);
    db.advance(300_000);
    const aborting = await sweep(deps, { intervalMs: 60_000 });
    expect(aborting.aborted).toEqual([a]);
    expect((await getRun(db, a))?.abortReason).toMatch(/^stalled: no progress for \d+ s$/);
    db.advance(ABORT_DRAIN_MS);
    const ended = await sweep(deps, { intervalMs: 60_000 });
    expect(ended.finalized).toEqual([a]);
    expect((await getRun(db, a))?.status).toBe("aborted");
    expect(h.executions.created).toEqual([a, b]);
  });
});

describe("sweeper: slots, leases, registry", () => {
  it("frees a global slot held by a run that ended, and gives it to the waiting run", async () => {
    const w = await world({ globalCap: 1 });
    const a = await w.h.accept("g1", "a");
    const b = await w.h.accept("g2", "b");
    await w.h.dispatch();
    expect(w.h.executions.created).toEqual([a.runId]);
    await w.h.start(a.runId);
    await markEnded(w.db, a.runId, { status: "ok", endedAt: w.db.now() }); // no hand-off
    const report = await sweep(w.deps);
    expect(w.h.executions.created).toEqual([a.runId, b.runId]);
    expect(Object.keys(await slotHolders(w.db))).toEqual([b.runId]);
    expect(report.diagnostics.map((d) => d.kind)).toContain("session.stuck");
  });

  it("frees a slot whose holder is gone even when no lane points at it", async () => {
    const w = await world({ globalCap: 1 });
    await acquireSlot(w.db, "run_vanished", 1);
    expect((await sweep(w.deps)).freedSlots).toEqual(["run_vanished"]);
  });

  it("releases an expired transcript writer lease", async () => {
    const w = await world();
    const a = await w.h.accept("s", "x");
    const run = (await getRun(w.db, a.runId))!;
    await claimWriter(w.db, run.sessionId, "run_dead_writer", { leaseMs: 1000, acquireTimeoutMs: 0 });
    w.db.advance(2000);
    expect((await sweep(w.deps)).releasedLeases).toEqual(["run_dead_writer"]);
  });

  it("forgets idle lanes, and keeps one that got a message after it looked", async () => {
    const w = await world();
    const a = await w.h.accept("idle", "x");
    await w.h.dispatch();
    await w.h.start(a.runId);
    await w.h.finish(a.runId);
    const report = await sweep(w.deps);
    expect(report.unregistered).toBe(1);
    expect(await listRegisteredLanes(w.db)).toEqual([]);
    await w.h.accept("idle", "again");
    expect((await listRegisteredLanes(w.db)).map((l) => l.sessionKey)).toEqual(["idle"]);
  });
});

describe("sweeper handler", () => {
  it("runs a sweep on the schedule event and handles an execution status change", async () => {
    const { h, deps, a, b } = await runningWithFollowup();
    const appDeps = { ...deps, runtime: {} } as unknown as AppDeps;
    const handler = createSweeperHandler({ ...appDeps, log: silentLog });
    const context = createLambdaContext("sweeper", 120_000);
    expect(await handler(sampleEvent("sweeper-scheduled.json"), context)).toMatchObject({ kind: "sweep", report: { lanes: 1 } });
    const change = sampleEvent("sweeper-execution-ended.json");
    change.detail.name = a;
    change.detail.executionArn = `arn:aws:states:us-east-1:0:execution:m:${a}`;
    h.executions.states.set(a, { status: "ABORTED" });
    expect(await handler(change, context)).toEqual({ kind: "execution", runOutcome: "finalized" });
    expect(h.executions.created).toEqual([a, b]);
  });
});
