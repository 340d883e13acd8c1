import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appendEvent, readEvents, type RunEvent } from "../../shared/aws/event-log";
import { keys } from "../../shared/aws/keys";
import { compactEventData, restoreEventText } from "../../shared/core/event-text";
import { startTestDb, type TestDb } from "../support/local-db";

let t: TestDb;
beforeAll(async () => {
  t = await startTestDb();
});
afterAll(async () => t.close());

const event = (seq: number, stream: RunEvent["stream"], data: Record<string, unknown>): RunEvent => ({
  v: 1, runId: "run-text", sessionKey: "s", seq, stream, ts: 1000 + seq, data,
});

/** Two assistant messages separated by a tool call, as the attempt sink emits them. */
const emitted: RunEvent[] = [
  event(1, "lifecycle", { phase: "start" }),
  event(2, "assistant", { text: "Hel", delta: "Hel" }),
  event(3, "assistant", { text: "Hello", delta: "lo" }),
  event(4, "tool", { phase: "start", name: "calculator" }),
  event(5, "assistant", { text: "The ", delta: "The " }),
  event(6, "assistant", { text: "The answer", delta: "answer" }),
  event(7, "lifecycle", { phase: "end" }),
];

describe("event log stores deltas only and rebuilds the cumulative text", () => {
  it("compacts and restores in memory", () => {
    expect(compactEventData({ text: "Hello", delta: "lo" })).toEqual({ delta: "lo", textOffset: 3 });
    expect(compactEventData({ phase: "start" })).toEqual({ phase: "start" });
    const stored = emitted.map((e) => ({ ...e, data: compactEventData(e.data) }));
    expect(restoreEventText(stored)).toEqual(emitted);
    // A gap before a mid-message delta cannot be rebuilt exactly: the delta alone is given.
    expect(restoreEventText([stored[2]])[0].data).toEqual({ text: "lo", delta: "lo" });
  });

  it("writes items without the cumulative text and reads any page back with it", async () => {
    for (const e of emitted) expect(await appendEvent(t.db, e)).toBe(true);
    const item = (await t.db.doc.send(new GetCommand({ TableName: t.db.table, Key: keys.runEvent("run-text", 6) }))).Item;
    expect(item?.data).toEqual({ delta: "answer", textOffset: 4 });
    expect(await readEvents(t.db, "run-text")).toEqual(emitted);
    expect(await readEvents(t.db, "run-text", 5)).toEqual(emitted.slice(5));
    expect(await readEvents(t.db, "run-text", 2, 2)).toEqual(emitted.slice(2, 4));
  });
});
