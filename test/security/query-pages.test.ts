import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listAttempts, putAttempt, type AttemptRecord } from "../../shared/aws/attempts";
import { appendEvent, readEvents } from "../../shared/aws/event-log";
import { queryItems } from "../../shared/aws/query-pages";
import { keys } from "../../shared/aws/keys";
import { startTestDb, type TestDb } from "../support/local-db";

let t: TestDb;
beforeAll(async () => {
  t = await startTestDb();
});
afterAll(async () => t.close());

const KB = 1024;

function attempt(runId: string, iteration: number, finalText: string): AttemptRecord {
  return {
    v: 1,
    runId,
    iteration,
    model: "openai/gpt-4o",
    offline: false,
    outcome: { kind: "completed" },
    finalText,
    usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0 },
    modelTurns: 1,
    toolCalls: 0,
    toolErrors: [],
    startedAt: iteration,
    endedAt: iteration + 1,
  };
}

describe("every Query follows LastEvaluatedKey past DynamoDB's 1 MB page (defect 3)", () => {
  it("listAttempts returns every attempt of a run whose records pass 1 MB, so finalize reads the last one", async () => {
    const runId = "run_many_attempts";
    const count = 8;
    for (let i = 0; i < count; i += 1) await putAttempt(t.db, attempt(runId, i, `${i}:`.padEnd(250 * KB, "x")));
    const attempts = await listAttempts(t.db, runId);
    expect(attempts.map((a) => a.iteration)).toEqual([...Array(count).keys()]);
    expect(attempts.at(-1)!.finalText.startsWith(`${count - 1}:`)).toBe(true);
    expect(attempts.reduce((sum, a) => sum + a.usage.input, 0)).toBe(10 * count);
  });

  it("readEvents fills the asked page across 1 MB pages, so `hasMore` is true while events remain", async () => {
    const runId = "run_many_events";
    const count = 40;
    for (let seq = 1; seq <= count; seq += 1) {
      await appendEvent(t.db, { v: 1, runId, sessionKey: "s", seq, stream: "tool", ts: seq, data: { phase: "result", output: "y".repeat(60 * KB) } });
    }
    const events = await readEvents(t.db, runId, 0, count);
    expect(events.map((e) => e.seq)).toEqual([...Array(count).keys()].map((i) => i + 1));
    const later = await readEvents(t.db, runId, 5, 30);
    expect(later.map((e) => e.seq)).toEqual([...Array(30).keys()].map((i) => i + 6));
  });

  it("queryItems stops at the limit it was given", async () => {
    const items = await queryItems(
      t.db,
      { KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)", ExpressionAttributeValues: { ":pk": keys.run("run_many_events").pk, ":prefix": "EV#" } },
      25,
    );
    expect(items).toHaveLength(25);
  });
});
