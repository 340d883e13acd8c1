import type { AttributeValue } from "@aws-sdk/client-dynamodb";
import { unmarshall } from "@aws-sdk/util-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRun, requestAbort } from "../../shared/aws/runs";
import { watchRun } from "../../shared/run/run-watch";
import { startTestDb, type TestDb } from "../support/local-db";

let t: TestDb;
beforeAll(async () => {
  t = await startTestDb();
});
afterAll(async () => t.close());

interface SeenRead {
  input: Record<string, unknown>;
  item: Record<string, unknown> | undefined;
}

/** Records every GetItem the real client sends and what came back (a middleware on the real SDK, no mock). */
function recordGets(): SeenRead[] {
  const seen: SeenRead[] = [];
  t.client.middlewareStack.add(
    (next, context) => async (args) => {
      const result = await next(args);
      if (/^Get(Item)?Command$/.test(String(context.commandName))) {
        const item = (result.output as { Item?: Record<string, AttributeValue> }).Item;
        seen.push({ input: args.input as Record<string, unknown>, item: item && unmarshall(item) });
      }
      return result;
    },
    { step: "initialize", name: "recordGets" },
  );
  return seen;
}

describe("the abort poll reads one attribute, not the run record (defect 7)", () => {
  it("stops a run with a 350 KB record on request, reading only abortRequestedAt (and the re-drive generation) each poll", async () => {
    const runId = "run_big_record";
    await createRun(t.db, {
      v: 1,
      runId,
      sessionKey: "abort-poll",
      sessionId: "sess_abort_poll",
      message: "m".repeat(350 * 1024),
      requestHash: "h",
      source: "rest",
      status: "running",
      model: "openai/gpt-4o",
      timeoutMs: 0,
      acceptedAt: t.db.now(),
    });
    const seen = recordGets();
    const watch = watchRun(t.db, runId, undefined, 20);
    try {
      await expect.poll(() => seen.length, { timeout: 30_000 }).toBeGreaterThanOrEqual(2);
      expect(watch.signal.aborted).toBe(false);
      await requestAbort(t.db, runId, "test");
      await expect.poll(() => watch.signal.aborted, { timeout: 30_000 }).toBe(true);
      expect(watch.reason()).toBe("abort_requested");
    } finally {
      watch.stop();
      t.client.middlewareStack.remove("recordGets");
    }
    for (const read of seen) {
      // The abort flag and the re-drive generation (a re-drive supersedes the attempt), nothing else.
      expect(read.input).toMatchObject({ ProjectionExpression: "abortRequestedAt, redriveGeneration", ConsistentRead: true });
      expect(Object.keys(read.item ?? {}).filter((key) => key !== "abortRequestedAt" && key !== "redriveGeneration")).toEqual([]);
    }
    expect(seen.at(-1)!.item).toEqual({ abortRequestedAt: expect.any(Number) });
  });
});
