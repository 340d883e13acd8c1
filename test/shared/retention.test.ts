/** One retention setting for run records and their events (issue 16). */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventExpiry, RUN_LIFETIME_SLACK_SECONDS, runRecordExpiry } from "../../shared/aws/event-log";
import { createRun, getRun, markEnded, type RunRecord } from "../../shared/aws/runs";
import { startTestDb, type TestDb } from "../support/local-db";

let t: TestDb;
beforeAll(async () => {
  t = await startTestDb();
});
afterAll(async () => t?.close());

const DAY_MS = 86_400_000;

function record(runId: string): RunRecord {
  return { v: 1, runId, sessionKey: "s", sessionId: "sid", message: "m", requestHash: "h", source: "rest", status: "running", model: "offline/echo", timeoutMs: 0, acceptedAt: t.db.now() };
}

describe("retention", () => {
  it("no event of a run expires before the run record (events written from its start to its end)", () => {
    const endedAt = Date.UTC(2026, 0, 10);
    for (const retentionDays of [1, 7, 30]) {
      const runExpiry = runRecordExpiry(endedAt, retentionDays);
      // The earliest event of the longest run (its start, 49 h before its end) and the last one.
      for (const ts of [endedAt - RUN_LIFETIME_SLACK_SECONDS * 1000, endedAt]) expect(eventExpiry(ts, retentionDays)).toBeGreaterThanOrEqual(runExpiry);
    }
  });

  it("an ended run's record carries its TTL and reads as absent once past it", async () => {
    await createRun(t.db, record("run_retention_1"));
    const endedAt = t.db.now();
    await markEnded(t.db, "run_retention_1", { status: "ok", endedAt, expiresAt: runRecordExpiry(endedAt, 7) });
    expect(await getRun(t.db, "run_retention_1")).toMatchObject({ status: "ok", expiresAt: runRecordExpiry(endedAt, 7) });
    t.advance(7 * DAY_MS + 1000);
    expect(await getRun(t.db, "run_retention_1")).toBeUndefined();
  });
});
