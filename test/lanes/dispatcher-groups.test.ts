/**
 * The dispatcher keeps FIFO order per message group (one session) and
 * nothing more: a failed record fails the rest of its own group, never
 * another session's records, and every group of a batch is dispatched.
 */
import type { Context, SQSEvent } from "aws-lambda";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDispatcherHandler } from "../../functions/dispatcher/app";
import type { AppDeps } from "../../shared/runtime/app-deps";
import { LaneHarness } from "./harness";
import { sqsRecord as record, Tables, testConfig } from "./support";

let tables: Tables;
beforeAll(async () => {
  tables = await Tables.start();
});
afterAll(async () => {
  await tables?.close();
});

describe("dispatcher batches", () => {
  it("a failed record fails only the rest of its own group; the other groups of the batch are dispatched", async () => {
    // Prepare: session a's first record is poison, its second a real run; session b has two runs.
    const h = new LaneHarness(await tables.fresh(), testConfig());
    const deps = { ...h.deps, runtime: {} } as unknown as AppDeps;
    const a2 = await h.accept("a", "after the poison");
    const b1 = await h.accept("b", "first of b");
    const b2 = await h.accept("b", "second of b");
    const pointer = (runId: string) => JSON.stringify({ v: 1, runId });
    const event: SQSEvent = {
      Records: [
        record("m-a1", "a", "{not json"),
        record("m-b1", "b", pointer(b1.runId)),
        record("m-a2", "a", pointer(a2.runId)),
        record("m-b2", "b", pointer(b2.runId)),
      ],
    };
    // Act
    const response = await createDispatcherHandler(deps)(event, {} as Context);
    // Assess: a's poison and the record behind it are returned to SQS (order kept); b was dispatched.
    expect(response.batchItemFailures.map((f) => f.itemIdentifier).sort()).toEqual(["m-a1", "m-a2"]);
    expect(h.executions.created).toContain(b1.runId);
    expect(h.executions.created).not.toContain(a2.runId);
  });
});
