import {
  DeleteMessageCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SendMessageCommandInput,
  SQSClient,
} from "@aws-sdk/client-sqs";
import type { SQSBatchResponse, SQSEvent } from "aws-lambda";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LocalLogger } from "../../infra/local/lambda-context";
import { createFifoQueueWithDlq, type FifoQueueWithDlq, type LocalSqs, startLocalSqs } from "../../infra/local/sqs";
import {
  failedItems,
  type SqsBatchHandler,
  type SqsEventSource,
  startSqsEventSource,
} from "../../infra/local/sqs-event-source";

const REGION = "us-east-1";

let sqs: LocalSqs;
let client: SQSClient;
let queueCounter = 0;

beforeAll(async () => {
  sqs = await startLocalSqs({ port: 0 });
  client = new SQSClient({
    endpoint: sqs.endpoint,
    region: REGION,
    credentials: { accessKeyId: "local", secretAccessKey: "local" },
  });
});

afterAll(async () => {
  client.destroy();
  await sqs.stop();
});

/**
 * A fresh queue pair per test, DLQ after 2 receives. Visibility 1 s where a
 * test waits for a redelivery; `NO_REDELIVERY` where one would only be a
 * machine too slow to finish within 1 s (it made "locks a group" fail under load).
 */
const NO_REDELIVERY = 120;

async function newQueue(visibilityTimeoutSeconds = 1): Promise<FifoQueueWithDlq> {
  queueCounter += 1;
  return createFifoQueueWithDlq(client, { name: `runs-${queueCounter}`, visibilityTimeoutSeconds, maxReceiveCount: 2 });
}

async function send(queueUrl: string, body: string, group: string, dedupId = body, extra: Partial<SendMessageCommandInput> = {}) {
  return client.send(
    new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body, MessageGroupId: group, MessageDeduplicationId: dedupId, ...extra }),
  );
}

async function receive(queueUrl: string, waitTimeSeconds = 0): Promise<Message[]> {
  const response = await client.send(
    new ReceiveMessageCommand({
      QueueUrl: queueUrl,
      MaxNumberOfMessages: 10,
      WaitTimeSeconds: waitTimeSeconds,
      MessageSystemAttributeNames: ["All"],
    }),
  );
  return response.Messages ?? [];
}

async function waitFor<T>(probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await sleep(25);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

interface RecordingLogger extends LocalLogger {
  errors: string[];
  warnings: string[];
}

function recordingLogger(): RecordingLogger {
  const errors: string[] = [];
  const warnings: string[] = [];
  return { errors, warnings, warn: (message) => warnings.push(message), error: (message) => errors.push(message) };
}

function source(
  queue: FifoQueueWithDlq,
  handler: SqsBatchHandler,
  extra: { concurrency?: number; batchSize?: number; logger?: LocalLogger } = {},
) {
  return startSqsEventSource({
    sqsClient: client,
    queueUrl: queue.queueUrl,
    queueArn: queue.queueArn,
    region: REGION,
    handler,
    functionName: "dispatcher",
    functionTimeoutMs: 1_000,
    waitTimeSeconds: 1,
    logger: extra.logger ?? recordingLogger(),
    concurrency: extra.concurrency,
    batchSize: extra.batchSize,
  });
}

async function withSource<T>(eventSource: SqsEventSource, act: () => Promise<T>): Promise<T> {
  try {
    return await act();
  } finally {
    await eventSource.stop();
  }
}

// Each test owns its queues, so the I/O-bound tests run concurrently.
describe.concurrent("local SQS (fauxqs) FIFO semantics", () => {
  it("drops a duplicate MessageDeduplicationId inside the window", async () => {
    // Prepare
    const queue = await newQueue(NO_REDELIVERY);

    // Act
    const first = await send(queue.queueUrl, "run-1", "s1", "run-1");
    const duplicate = await send(queue.queueUrl, "run-1 again", "s1", "run-1");
    const received = await receive(queue.queueUrl);

    // Assess
    expect(duplicate.MessageId).toBe(first.MessageId);
    expect(duplicate.SequenceNumber).toBe(first.SequenceNumber);
    expect(received.map((m) => m.Body)).toEqual(["run-1"]);
  });

  it("keeps group order and locks a group while one of its messages is in flight", async () => {
    // Prepare
    const queue = await newQueue(NO_REDELIVERY);
    await send(queue.queueUrl, "a1", "a");
    await send(queue.queueUrl, "a2", "a");
    await send(queue.queueUrl, "b1", "b");

    // Act
    const firstBatch = await receive(queue.queueUrl);
    const whileLocked = await receive(queue.queueUrl);
    const a1 = firstBatch.find((m) => m.Body === "a1");
    await client.send(new DeleteMessageCommand({ QueueUrl: queue.queueUrl, ReceiptHandle: a1?.ReceiptHandle }));
    const afterDelete = await receive(queue.queueUrl);

    // Assess: fauxqs hands out one message per group per receive (AWS may hand out several, in order).
    expect(firstBatch.map((m) => m.Body).sort()).toEqual(["a1", "b1"]);
    expect(whileLocked).toEqual([]);
    expect(afterDelete.map((m) => m.Body)).toEqual(["a2"]);
  });

  it("makes an undeleted message visible again after the visibility timeout", async () => {
    // Prepare: a window wide enough that the second receive surely falls inside it, however loaded the machine.
    const queue = await newQueue(5);
    await send(queue.queueUrl, "run-v", "s1");

    // Act
    const first = await receive(queue.queueUrl);
    const hidden = await receive(queue.queueUrl);
    const again = await waitFor(async () => {
      const messages = await receive(queue.queueUrl);
      return messages.length > 0 ? messages : undefined;
    });

    // Assess
    expect(first[0]?.Attributes?.ApproximateReceiveCount).toBe("1");
    expect(hidden).toEqual([]);
    expect(again[0]?.Body).toBe("run-v");
    expect(again[0]?.Attributes?.ApproximateReceiveCount).toBe("2");
  });

  it("redrives a message to the DLQ once its receive count exceeds maxReceiveCount", async () => {
    // Prepare
    const queue = await newQueue();
    await send(queue.queueUrl, "poison", "s1");

    // Act
    await receive(queue.queueUrl);
    await sleep(1_100);
    await receive(queue.queueUrl);
    await sleep(1_100);
    const third = await receive(queue.queueUrl);
    const dead = await receive(queue.dlqUrl);

    // Assess
    expect(third).toEqual([]);
    expect(dead.map((m) => m.Body)).toEqual(["poison"]);
    expect(dead[0]?.Attributes?.MessageGroupId).toBe("s1");
  });

  it("rejects a message over 256 KiB and accepts one at the limit", async () => {
    // Prepare
    const queue = await newQueue(NO_REDELIVERY);

    // Act
    const atLimit = await send(queue.queueUrl, "x".repeat(256 * 1024), "s1", "at-limit");
    const overLimit = send(queue.queueUrl, "x".repeat(256 * 1024 + 1), "s1", "over-limit");

    // Assess
    expect(atLimit.MessageId).toBeTruthy();
    // AWS's SDK error name is "InvalidParameterValue"; fauxqs's query-error header makes it
    // "AWS.SimpleQueueService.InvalidParameterValue".
    await expect(overLimit).rejects.toMatchObject({
      name: expect.stringMatching(/InvalidParameterValue$/),
      message: expect.stringContaining("262144 bytes"),
    });
  });
});

describe.concurrent("SQS event source (Lambda event source mapping emulation)", () => {
  it("invokes the handler with real-shaped SQS records", async () => {
    // Prepare
    const queue = await newQueue(NO_REDELIVERY);
    const events: SQSEvent[] = [];
    const eventSource = source(queue, async (event) => {
      events.push(event);
    });
    await send(queue.queueUrl, '{"runId":"r1"}', "session-1", "r1", {
      MessageAttributes: {
        kind: { DataType: "String", StringValue: "agent" },
        blob: { DataType: "Binary", BinaryValue: Buffer.from("hi") },
      },
    });

    // Act
    await withSource(eventSource, () => eventSource.idle());

    // Assess
    const record = events[0]?.Records[0];
    expect(record).toMatchObject({
      body: '{"runId":"r1"}',
      eventSource: "aws:sqs",
      eventSourceARN: queue.queueArn,
      awsRegion: REGION,
      attributes: { ApproximateReceiveCount: "1", MessageGroupId: "session-1", MessageDeduplicationId: "r1" },
      messageAttributes: {
        kind: { stringValue: "agent", stringListValues: [], binaryListValues: [], dataType: "String" },
        blob: { binaryValue: Buffer.from("hi").toString("base64"), stringListValues: [], binaryListValues: [], dataType: "Binary" },
      },
    });
    expect(Object.keys(record?.attributes ?? {})).toEqual(
      expect.arrayContaining(["SentTimestamp", "SequenceNumber", "SenderId", "ApproximateFirstReceiveTimestamp"]),
    );
    expect(record?.md5OfBody).toMatch(/^[0-9a-f]{32}$/);
    expect(record?.receiptHandle).toBeTruthy();
  });

  it("processes groups concurrently while keeping each group's order", async () => {
    // Prepare
    const queue = await newQueue(NO_REDELIVERY);
    const seen: Record<string, string[]> = { a: [], b: [] };
    let running = 0;
    let maxRunning = 0;
    // The first batch waits until a second one runs beside it: concurrency is shown by a barrier, not by a 40 ms overlap.
    let bothRan!: () => void;
    const overlap = new Promise<void>((resolve) => (bothRan = resolve));
    const handler: SqsBatchHandler = async (event) => {
      running += 1;
      maxRunning = Math.max(maxRunning, running);
      if (running === 2) bothRan();
      await overlap;
      for (const record of event.Records) seen[record.attributes.MessageGroupId ?? ""]?.push(record.body);
      running -= 1;
    };
    for (let i = 1; i <= 4; i += 1) {
      await send(queue.queueUrl, `a${i}`, "a");
      await send(queue.queueUrl, `b${i}`, "b");
    }
    // One message per batch, so that the two groups land on different pollers.
    const eventSource = source(queue, handler, { concurrency: 2, batchSize: 1 });

    // Act
    await withSource(eventSource, () => eventSource.idle());

    // Assess
    expect(seen.a).toEqual(["a1", "a2", "a3", "a4"]);
    expect(seen.b).toEqual(["b1", "b2", "b3", "b4"]);
    expect(maxRunning).toBe(2);
  });

  it("deletes the successes of a partial failure and redrives the failed item to the DLQ", async () => {
    // Prepare
    const queue = await newQueue();
    const deliveries: Array<{ body: string; receiveCount: string }> = [];
    const handler: SqsBatchHandler = async (event): Promise<SQSBatchResponse> => {
      const failures = event.Records.filter((record) => record.body === "poison");
      for (const record of event.Records) {
        deliveries.push({ body: record.body, receiveCount: record.attributes.ApproximateReceiveCount });
      }
      return { batchItemFailures: failures.map((record) => ({ itemIdentifier: record.messageId })) };
    };
    await send(queue.queueUrl, "poison", "s1");
    await send(queue.queueUrl, "fine", "s2");
    const eventSource = source(queue, handler);

    // Act
    const dead = await withSource(eventSource, () => waitFor(async () => (await receive(queue.dlqUrl))[0]));

    // Assess
    expect(dead.Body).toBe("poison");
    expect(deliveries.filter((d) => d.body === "fine")).toEqual([{ body: "fine", receiveCount: "1" }]);
    expect(deliveries.filter((d) => d.body === "poison").map((d) => d.receiveCount)).toEqual(["1", "2"]);
    expect(await receive(queue.queueUrl)).toEqual([]);
  });

  it("holds a group's next message back until a failed one succeeds", async () => {
    // Prepare
    const queue = await newQueue();
    const deliveries: string[] = [];
    const handler: SqsBatchHandler = async (event): Promise<SQSBatchResponse> => {
      const failures: SQSBatchResponse["batchItemFailures"] = [];
      for (const record of event.Records) {
        const attempt = record.attributes.ApproximateReceiveCount;
        deliveries.push(`${record.body}#${attempt}`);
        if (record.body === "s1-first" && attempt === "1") failures.push({ itemIdentifier: record.messageId });
      }
      return { batchItemFailures: failures };
    };
    await send(queue.queueUrl, "s1-first", "s1");
    await send(queue.queueUrl, "s1-second", "s1");
    const eventSource = source(queue, handler);

    // Act
    await withSource(eventSource, () => waitFor(() => (deliveries.length >= 3 ? deliveries : undefined)));

    // Assess
    expect(deliveries).toEqual(["s1-first#1", "s1-first#2", "s1-second#1"]);
  });

  it("leaves the whole batch when the handler throws, and delivers it again", async () => {
    // Prepare
    const queue = await newQueue();
    let calls = 0;
    const bodies: string[] = [];
    const handler: SqsBatchHandler = async (event) => {
      calls += 1;
      if (calls === 1) throw new Error("dispatcher crashed");
      bodies.push(...event.Records.map((record) => `${record.body}#${record.attributes.ApproximateReceiveCount}`));
    };
    await send(queue.queueUrl, "run-t", "s1");
    const logger = recordingLogger();
    const eventSource = source(queue, handler, { concurrency: 1, logger });

    // Act
    await withSource(eventSource, () => waitFor(() => (bodies.length > 0 ? bodies : undefined)));

    // Assess
    expect(bodies).toEqual(["run-t#2"]);
    expect(logger.warnings.some((w) => w.includes("function failed"))).toBe(true);
  });

  it("treats an empty itemIdentifier as a failure of the whole batch", async () => {
    // Prepare
    const queue = await newQueue();
    const deliveries: string[] = [];
    const handler: SqsBatchHandler = async (event) => {
      deliveries.push(...event.Records.map((record) => `${record.body}#${record.attributes.ApproximateReceiveCount}`));
      return deliveries.length <= 1 ? { batchItemFailures: [{ itemIdentifier: "" }] } : { batchItemFailures: [] };
    };
    await send(queue.queueUrl, "run-e", "s1");
    const eventSource = source(queue, handler, { concurrency: 1 });

    // Act
    await withSource(eventSource, () => waitFor(() => (deliveries.length >= 2 ? deliveries : undefined)));

    // Assess
    expect(deliveries).toEqual(["run-e#1", "run-e#2"]);
  });

  it("waits for the in-flight batch on stop()", async () => {
    // Prepare
    const queue = await newQueue();
    let started = false;
    let finished = false;
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const handler: SqsBatchHandler = async () => {
      started = true;
      await held; // in flight until the test has asked the source to stop
      finished = true;
    };
    await send(queue.queueUrl, "run-s", "s1");
    const eventSource = source(queue, handler, { concurrency: 1 });
    await waitFor(() => (started ? true : undefined));

    // Act
    const stopping = eventSource.stop();
    release();
    await stopping;

    // Assess
    expect(finished).toBe(true);
    expect(await receive(queue.queueUrl)).toEqual([]);
    await sleep(1_100);
    expect(await receive(queue.queueUrl)).toEqual([]);
  });

  it("logs and retries when polling fails instead of crashing", async () => {
    // Prepare
    const logger = recordingLogger();
    const eventSource = startSqsEventSource({
      sqsClient: client,
      queueUrl: `${sqs.endpoint}/000000000000/missing.fifo`,
      queueArn: `arn:aws:sqs:${REGION}:000000000000:missing.fifo`,
      region: REGION,
      handler: async () => undefined,
      functionName: "dispatcher",
      functionTimeoutMs: 1_000,
      logger,
    });

    // Act
    await waitFor(() => (logger.errors.length >= 2 ? true : undefined));
    await eventSource.stop();

    // Assess
    expect(logger.errors[0]).toContain("polling failed");
  });
});

describe("reading a ReportBatchItemFailures response", () => {
  const ids = ["m1", "m2"];

  it.each([
    ["no response", undefined],
    ["null", null],
    ["an empty object", {}],
    ["a null list", { batchItemFailures: null }],
    ["an empty list", { batchItemFailures: [] }],
  ])("treats %s as complete success", (_, response) => {
    expect(failedItems(response, ids)).toEqual(new Set());
  });

  it.each([
    ["an empty itemIdentifier", { batchItemFailures: [{ itemIdentifier: "" }] }],
    ["a missing itemIdentifier", { batchItemFailures: [{ id: "m1" }] }],
    ["an unknown id", { batchItemFailures: [{ itemIdentifier: "m1" }, { itemIdentifier: "nope" }] }],
    ["a list that is not a list", { batchItemFailures: "m1" }],
    ["a non-object response", "m1"],
  ])("treats %s as complete failure", (_, response) => {
    expect(failedItems(response, ids)).toBe("all");
  });

  it("returns the listed ids", () => {
    expect(failedItems({ batchItemFailures: [{ itemIdentifier: "m2" }] }, ids)).toEqual(new Set(["m2"]));
  });
});
