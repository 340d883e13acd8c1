import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appendEvent, lastEventSeq, newestEventItems, type RunEvent } from "../../shared/aws/event-log";
import { lastEventAt } from "../../shared/aws/lease-sweep";
import { startTestDb, type TestDb } from "../support/local-db";

let t: TestDb;
beforeAll(async () => {
  t = await startTestDb();
});
afterAll(async () => t.close());

const event = (runId: string, seq: number): RunEvent => ({
  v: 1, runId, sessionKey: "s", seq, stream: "lifecycle", ts: 5000 + seq, data: { phase: seq === 1 ? "start" : "end" },
});

describe("newest-first event reads share one query", () => {
  it("projects only the named attributes, reserved words included", async () => {
    for (const seq of [1, 2, 3]) expect(await appendEvent(t.db, event("run-newest", seq))).toBe(true);
    expect(await newestEventItems(t.db, "run-newest", 2, ["seq", "ts"])).toEqual([
      { seq: 3, ts: 5003 },
      { seq: 2, ts: 5002 },
    ]);
  });

  it("gives the sweeper the newest event's time and the writer the newest seq", async () => {
    expect(await lastEventAt(t.db, "run-newest")).toBe(5003);
    expect(await lastEventSeq(t.db, "run-newest")).toBe(3);
  });

  it("answers nothing for a run without events", async () => {
    expect(await lastEventAt(t.db, "run-empty")).toBeUndefined();
    expect(await lastEventSeq(t.db, "run-empty")).toBe(0);
  });
});
