/**
 * Failed queue messages reach the DLQ (fauxqs' redrive, the same policy the
 * stack creates) and the table says why, under the message id the DLQ keeps.
 */
import { ReceiveMessageCommand, SendMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDispatcherHandler } from "../../functions/dispatcher/app";
import { createFifoQueueWithDlq, startLocalSqs, type LocalSqs } from "../../infra/local/sqs";
import { startSqsEventSource } from "../../infra/local/sqs-event-source";
import { getDispatchFailure } from "../../shared/aws/dispatch-failures";
import type { AppDeps } from "../../shared/runtime/app-deps";
import { LaneHarness } from "./harness";
import { sleep, Tables, testConfig } from "./support";

let sqs: LocalSqs;
let client: SQSClient;
let tables: Tables;
beforeAll(async () => {
  sqs = await startLocalSqs({ port: 0 });
  client = new SQSClient({ endpoint: sqs.endpoint, region: "us-east-1", credentials: { accessKeyId: "local", secretAccessKey: "local" } });
  tables = await Tables.start();
});
afterAll(async () => {
  client.destroy();
  await sqs.stop();
  await tables?.close();
});

async function dlqMessages(url: string, expected: number) {
  const found = [];
  for (let i = 0; i < 200 && found.length < expected; i += 1) {
    const out = await client.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }));
    found.push(...(out.Messages ?? []));
    if (found.length < expected) await sleep(50);
  }
  return found;
}

describe("dispatcher failures", () => {
  it("a message that keeps failing lands in the DLQ with its reason recorded", async () => {
    // Prepare: Step Functions refuses every start; the queue redrives after 2 receives.
    const h = new LaneHarness(await tables.fresh(), testConfig({ globalCap: 0 }));
    const queue = await createFifoQueueWithDlq(client, { name: "dlq-case-1", visibilityTimeoutSeconds: 1, maxReceiveCount: 2 });
    h.executions.failNext = 1000;
    const deps = { ...h.deps, runtime: {} } as unknown as AppDeps;
    const accepted = await h.accept("s", "doomed");
    const poison = "{not json";
    await client.send(new SendMessageCommand({ QueueUrl: queue.queueUrl, MessageBody: JSON.stringify({ v: 1, runId: accepted.runId }), MessageGroupId: "s", MessageDeduplicationId: accepted.runId }));
    await client.send(new SendMessageCommand({ QueueUrl: queue.queueUrl, MessageBody: poison, MessageGroupId: "other", MessageDeduplicationId: "poison-1" }));
    // Act
    const source = startSqsEventSource({
      sqsClient: client, queueUrl: queue.queueUrl, queueArn: queue.queueArn, region: "us-east-1",
      handler: createDispatcherHandler(deps), functionName: "dispatcher", functionTimeoutMs: 1000, waitTimeSeconds: 0,
      logger: { warn: () => undefined, error: () => undefined },
    });
    const parked = await dlqMessages(queue.dlqUrl, 2);
    await source.stop();
    // Assess
    expect(parked).toHaveLength(2);
    const byBody = new Map(parked.map((m) => [m.Body, m.MessageId!]));
    const transient = await getDispatchFailure(h.db, byBody.get(JSON.stringify({ v: 1, runId: accepted.runId }))!);
    expect(transient).toMatchObject({ runId: accepted.runId, groupId: "s", errorName: "InjectedFault", reason: "InjectedFault: injected StartExecution failure", receiveCount: 2, failures: 2 });
    const poisoned = await getDispatchFailure(h.db, byBody.get(poison)!);
    expect(poisoned).toMatchObject({ groupId: "other", errorName: "PoisonMessageError", reason: expect.stringContaining("is not a run pointer") });
    // Nothing was lost: the run owns its lane, not started; the sweeper (or a DLQ redrive) starts it.
    expect((await h.lane("s")).activeRunId).toBe(accepted.runId);
    expect((await h.run(accepted.runId))?.status).toBe("accepted");
    h.executions.failNext = 0;
    const { sweep } = await import("../../shared/sweeper/sweep");
    await sweep(deps);
    expect(h.executions.created).toEqual([accepted.runId]);
  });
});
