import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appendEvent, eventExpiry } from "../../shared/aws/event-log";
import { createRun, markEnded, type RunRecord } from "../../shared/aws/runs";
import { LIFECYCLE_ERROR_GRACE_MS } from "../../shared/core/lifecycle-wait";
import { waitForRun } from "../../shared/intake/wait";
import { startTestDb, type TestDb } from "../support/local-db";
import { until } from "../support/until";

let t: TestDb;
beforeAll(async () => {
  t = await startTestDb();
});
afterAll(async () => t?.close());

let counter = 0;
async function runningRun(): Promise<string> {
  const runId = `run_wait_${++counter}`;
  const run: RunRecord = {
    v: 1, runId, sessionKey: "wait", sessionId: "sess_wait", message: "hi", requestHash: "h", source: "ws",
    status: "running", model: "offline/echo", timeoutMs: 0, acceptedAt: t.db.now(), startedAt: t.db.now(),
  };
  await createRun(t.db, run);
  return runId;
}

async function lifecycle(runId: string, seq: number, data: Record<string, unknown>): Promise<void> {
  const ts = t.db.now();
  await appendEvent(t.db, { v: 1, runId, sessionKey: "wait", seq, stream: "lifecycle", ts, data, expiresAt: eventExpiry(ts, 1) });
}

/**
 * The db a waiter polls with, counting its clock reads (each poll reads the
 * clock twice: verdict, then time left). `polled()` returns once a whole poll
 * has begun and decided after the call: the barrier "the waiter has seen what
 * was written before", however slow the machine (no fixed sleep).
 */
function watched() {
  let clockReads = 0;
  const db = { ...t.db, now: () => ((clockReads += 1), t.db.now()) };
  const polled = async () => {
    const target = clockReads + 4; // finish the poll under way (at most 2 reads), then one more whole poll
    await until(async () => (clockReads >= target ? true : undefined), "the waiter to poll again");
  };
  return { db, polled };
}

describe("agent.wait", () => {
  it("answers at once from a terminal run record", async () => {
    const runId = await runningRun();
    await markEnded(t.db, runId, { status: "error", endedAt: t.db.now(), error: "LLM request failed." });
    expect(await waitForRun(t.db, runId, 10_000)).toMatchObject({ runId, status: "error", error: "LLM request failed." });
  });

  it("times out (wait-only) while the run goes on", async () => {
    const runId = await runningRun();
    expect(await waitForRun(t.db, runId, 100)).toMatchObject({ runId, status: "timeout", startedAt: expect.any(Number) });
  });

  it("makes a lifecycle error final only after the 15 s grace", async () => {
    // Prepare: a lifecycle error emitted while the record still says running (a layer that may retry).
    const runId = await runningRun();
    await lifecycle(runId, 1, { phase: "start", startedAt: t.db.now() });
    await lifecycle(runId, 2, { phase: "error", error: "overloaded", endedAt: t.db.now() });
    // Act
    const waiter = watched();
    let answered: unknown;
    const waiting = waitForRun(waiter.db, runId, 60_000).then((result) => (answered = result));
    await waiter.polled();
    // Assess: still waiting inside the grace, final after it.
    expect(answered).toBeUndefined();
    t.advance(LIFECYCLE_ERROR_GRACE_MS);
    expect(await waiting).toMatchObject({ runId, status: "error", error: "overloaded" });
  });

  it("lets a retry that starts the run again inside the grace cancel the error", async () => {
    const runId = await runningRun();
    await lifecycle(runId, 1, { phase: "error", error: "overloaded" });
    const waiter = watched();
    let answered: unknown;
    const waiting = waitForRun(waiter.db, runId, 60_000).then((result) => (answered = result));
    await waiter.polled();
    await lifecycle(runId, 2, { phase: "start", startedAt: t.db.now() });
    await waiter.polled(); // the waiter has read the start before the clock passes the grace
    t.advance(LIFECYCLE_ERROR_GRACE_MS + 1);
    await waiter.polled();
    expect(answered).toBeUndefined();
    await lifecycle(runId, 3, { phase: "end", endedAt: t.db.now() });
    expect(await waiting).toMatchObject({ runId, status: "ok" });
  });
});
