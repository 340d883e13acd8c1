/**
 * The project's emulation of a Lambda SQS event source mapping with
 * `FunctionResponseTypes: ["ReportBatchItemFailures"]`.
 *
 * AWS semantics mirrored:
 * - long-polls the queue and invokes the function synchronously with a
 *   real-shaped `SQSEvent` (record attributes and message attributes in
 *   Lambda's shape, not the SQS API's);
 * - on success, deletes every message not listed in `batchItemFailures`;
 *   listed ones stay in flight, come back after the queue's visibility
 *   timeout, and reach the DLQ through the queue's redrive policy;
 * - the batch is a complete failure (nothing deleted) when the function
 *   throws or times out, or when the response is malformed: a
 *   `batchItemFailures` that is not a list, an item that is not an object,
 *   an empty or missing `itemIdentifier`, or one that names no message of
 *   the batch;
 * - an empty or absent response, or an empty / null list, is a complete
 *   success;
 * - order within a FIFO message group comes from the queue's group lock: a
 *   group's next message is not delivered while one is in flight.
 *
 * Not mirrored: AWS's scaling (we run `concurrency` pollers), batching
 * windows, and refusing the mapping when the queue's visibility timeout is
 * shorter than the function timeout (we log a warning instead).
 */
import {
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import type { SQSBatchResponse, SQSEvent, SQSMessageAttributes, SQSRecord, SQSRecordAttributes } from "aws-lambda";
import { invokeLikeLambda, type LambdaHandler, type LocalLogger } from "./lambda-context";

export type SqsBatchHandler = LambdaHandler<SQSEvent, SQSBatchResponse | void>;

export interface SqsEventSourceOptions {
  sqsClient: SQSClient;
  queueUrl: string;
  queueArn: string;
  region: string;
  handler: SqsBatchHandler;
  functionName: string;
  functionTimeoutMs: number;
  /** 1-10, as for a FIFO queue. */
  batchSize?: number;
  waitTimeSeconds?: number;
  /** Pollers running at once; each processes one batch at a time. */
  concurrency?: number;
  logger?: LocalLogger;
}

export interface SqsEventSource {
  /** Stops polling; resolves when in-flight batches are done. */
  stop(): Promise<void>;
  /**
   * Resolves when no batch is being processed and every poller has since
   * found the queue empty. Messages waiting out a visibility timeout are
   * invisible, so they do not keep the source busy.
   */
  idle(): Promise<void>;
}

const INITIAL_BACKOFF_MS = 100;
const MAX_BACKOFF_MS = 5_000;

const consoleLogger: LocalLogger = {
  warn: (message, details) => console.warn(message, details ?? ""),
  error: (message, details) => console.error(message, details ?? ""),
};

export function startSqsEventSource(options: SqsEventSourceOptions): SqsEventSource {
  const config = withDefaults(options);
  const idleTracker = new IdleTracker(config.concurrency);
  const stopper = new Stopper();
  warnOnShortVisibilityTimeout(config);
  const pollers = Array.from({ length: config.concurrency }, (_, index) =>
    pollLoop(index, config, idleTracker, stopper),
  );
  return {
    stop: async () => {
      stopper.stop();
      await Promise.all(pollers);
      idleTracker.release();
    },
    idle: () => (stopper.stopped ? Promise.resolve() : idleTracker.wait()),
  };
}

/** The stop flag, plus a promise that cuts a poller's backoff pause short. */
class Stopper {
  stopped = false;
  private readonly signal: Promise<void>;
  private resolveSignal: () => void = () => undefined;

  constructor() {
    this.signal = new Promise((resolve) => {
      this.resolveSignal = resolve;
    });
  }

  stop(): void {
    this.stopped = true;
    this.resolveSignal();
  }

  /** Sleeps for `ms`, or less if stop() is called meanwhile. */
  pause(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const slept = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
    });
    return Promise.race([slept, this.signal]).finally(() => clearTimeout(timer));
  }
}

type Config = Required<Omit<SqsEventSourceOptions, "logger">> & { logger: LocalLogger };

function withDefaults(options: SqsEventSourceOptions): Config {
  const config: Config = {
    ...options,
    batchSize: options.batchSize ?? 10,
    waitTimeSeconds: options.waitTimeSeconds ?? 1,
    concurrency: options.concurrency ?? 2,
    logger: options.logger ?? consoleLogger,
  };
  if (!Number.isInteger(config.batchSize) || config.batchSize < 1 || config.batchSize > 10) {
    throw new RangeError(`batchSize must be an integer from 1 to 10, got ${config.batchSize}`);
  }
  if (!Number.isInteger(config.concurrency) || config.concurrency < 1) {
    throw new RangeError(`concurrency must be a positive integer, got ${config.concurrency}`);
  }
  return config;
}

async function pollLoop(index: number, config: Config, idle: IdleTracker, stopper: Stopper): Promise<void> {
  let backoffMs = INITIAL_BACKOFF_MS;
  while (!stopper.stopped) {
    const ticket = idle.receiveStarted();
    try {
      const messages = await receive(config);
      backoffMs = INITIAL_BACKOFF_MS;
      if (messages.length === 0) {
        idle.foundEmpty(index, ticket);
        continue;
      }
      await idle.busy(processBatch(messages, config));
    } catch (error) {
      config.logger.error("sqs event source: polling failed, backing off", {
        queueUrl: config.queueUrl,
        backoffMs,
        error: String(error),
      });
      await stopper.pause(backoffMs);
      backoffMs = Math.min(backoffMs * 2, MAX_BACKOFF_MS);
    }
  }
}

async function receive(config: Config): Promise<Message[]> {
  const response = await config.sqsClient.send(
    new ReceiveMessageCommand({
      QueueUrl: config.queueUrl,
      MaxNumberOfMessages: config.batchSize,
      WaitTimeSeconds: config.waitTimeSeconds,
      MessageSystemAttributeNames: ["All"],
      MessageAttributeNames: ["All"],
    }),
  );
  return response.Messages ?? [];
}

async function processBatch(messages: Message[], config: Config): Promise<void> {
  const event: SQSEvent = { Records: messages.map((message) => toSqsRecord(message, config)) };
  const failed = await invokeForFailures(event, config);
  if (failed === "all") return;
  await deleteMessages(
    messages.filter((message) => !failed.has(message.MessageId ?? "")),
    config,
  );
}

/** Invokes the function; answers which messages failed ("all" when the batch failed as a whole). */
async function invokeForFailures(event: SQSEvent, config: Config): Promise<FailedItems> {
  const ids = event.Records.map((record) => record.messageId);
  try {
    const response = await invokeLikeLambda(config.handler, event, {
      functionName: config.functionName,
      timeoutMs: config.functionTimeoutMs,
      region: config.region,
    });
    const failed = failedItems(response, ids);
    if (failed === "all") {
      config.logger.warn("sqs event source: malformed batchItemFailures, the whole batch will be retried", {
        functionName: config.functionName,
        messageIds: ids,
      });
    }
    return failed;
  } catch (error) {
    config.logger.warn("sqs event source: function failed, the batch will be retried", {
      functionName: config.functionName,
      messageIds: ids,
      error: String(error),
    });
    return "all";
  }
}

type FailedItems = "all" | Set<string>;

/** Lambda's reading of a ReportBatchItemFailures response. */
export function failedItems(response: unknown, batchMessageIds: string[]): FailedItems {
  if (response === null || response === undefined) return new Set();
  if (typeof response !== "object" || Array.isArray(response)) return "all";
  const list = (response as { batchItemFailures?: unknown }).batchItemFailures;
  if (list === null || list === undefined) return new Set();
  if (!Array.isArray(list)) return "all";
  const known = new Set(batchMessageIds);
  const failed = new Set<string>();
  for (const item of list) {
    const id = typeof item === "object" && item !== null ? (item as { itemIdentifier?: unknown }).itemIdentifier : undefined;
    if (typeof id !== "string" || id === "" || !known.has(id)) return "all";
    failed.add(id);
  }
  return failed;
}

async function deleteMessages(messages: Message[], config: Config): Promise<void> {
  if (messages.length === 0) return;
  const response = await config.sqsClient.send(
    new DeleteMessageBatchCommand({
      QueueUrl: config.queueUrl,
      Entries: messages.map((message, index) => ({ Id: `m${index}`, ReceiptHandle: message.ReceiptHandle })),
    }),
  );
  if (response.Failed && response.Failed.length > 0) {
    // Those messages come back after their visibility timeout: at-least-once, as in AWS.
    config.logger.warn("sqs event source: some processed messages could not be deleted", {
      failed: response.Failed,
    });
  }
}

const RECORD_ATTRIBUTE_ORDER = [
  "ApproximateReceiveCount",
  "SentTimestamp",
  "SequenceNumber",
  "MessageGroupId",
  "SenderId",
  "MessageDeduplicationId",
  "ApproximateFirstReceiveTimestamp",
  "AWSTraceHeader",
  "DeadLetterQueueSourceArn",
] as const;

export function toSqsRecord(message: Message, source: { queueArn: string; region: string }): SQSRecord {
  const record: SQSRecord = {
    messageId: message.MessageId ?? "",
    receiptHandle: message.ReceiptHandle ?? "",
    body: message.Body ?? "",
    attributes: recordAttributes(message.Attributes ?? {}),
    messageAttributes: recordMessageAttributes(message),
    md5OfBody: message.MD5OfBody ?? "",
    eventSource: "aws:sqs",
    eventSourceARN: source.queueArn,
    awsRegion: source.region,
  };
  if (message.MD5OfMessageAttributes) record.md5OfMessageAttributes = message.MD5OfMessageAttributes;
  return record;
}

function recordAttributes(attributes: Record<string, string>): SQSRecordAttributes {
  const shaped: Record<string, string> = {};
  for (const name of RECORD_ATTRIBUTE_ORDER) {
    const value = attributes[name];
    if (value !== undefined) shaped[name] = value;
  }
  return shaped as unknown as SQSRecordAttributes;
}

/** Lambda's shape: camelCase, binary as base64, list fields always present. */
function recordMessageAttributes(message: Message): SQSMessageAttributes {
  const shaped: SQSMessageAttributes = {};
  for (const [name, attribute] of Object.entries(message.MessageAttributes ?? {})) {
    shaped[name] = {
      ...(attribute.StringValue !== undefined ? { stringValue: attribute.StringValue } : {}),
      ...(attribute.BinaryValue !== undefined ? { binaryValue: toBase64(attribute.BinaryValue) } : {}),
      stringListValues: attribute.StringListValues ?? [],
      binaryListValues: (attribute.BinaryListValues ?? []).map(toBase64),
      dataType: attribute.DataType ?? "String",
    };
  }
  return shaped;
}

function toBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString("base64");
}

/**
 * Tracks whether the source is idle: no batch in flight, and each poller has
 * found the queue empty in a receive that began after idle() was asked.
 */
class IdleTracker {
  private receiveCounter = 0;
  private inFlight = 0;
  private readonly waiters: Array<{ after: number; emptyPollers: Set<number>; resolve: () => void }> = [];

  constructor(private readonly pollers: number) {}

  receiveStarted(): number {
    this.receiveCounter += 1;
    return this.receiveCounter;
  }

  foundEmpty(poller: number, ticket: number): void {
    for (const waiter of this.waiters) {
      if (ticket > waiter.after) waiter.emptyPollers.add(poller);
    }
    this.settle();
  }

  async busy(work: Promise<void>): Promise<void> {
    this.inFlight += 1;
    try {
      await work;
    } finally {
      this.inFlight -= 1;
    }
  }

  wait(): Promise<void> {
    return new Promise((resolve) => {
      this.waiters.push({ after: this.receiveCounter, emptyPollers: new Set(), resolve });
    });
  }

  release(): void {
    for (const waiter of this.waiters.splice(0)) waiter.resolve();
  }

  private settle(): void {
    if (this.inFlight > 0) return;
    for (let i = this.waiters.length - 1; i >= 0; i -= 1) {
      const waiter = this.waiters[i];
      if (waiter && waiter.emptyPollers.size >= this.pollers) {
        this.waiters.splice(i, 1);
        waiter.resolve();
      }
    }
  }
}

function warnOnShortVisibilityTimeout(config: Config): void {
  config.sqsClient
    .send(new GetQueueAttributesCommand({ QueueUrl: config.queueUrl, AttributeNames: ["VisibilityTimeout"] }))
    .then((response) => {
      const visibilitySeconds = Number(response.Attributes?.VisibilityTimeout);
      if (visibilitySeconds * 1000 < config.functionTimeoutMs) {
        config.logger.warn(
          "sqs event source: queue visibility timeout is shorter than the function timeout; AWS refuses this mapping",
          { queueUrl: config.queueUrl, visibilitySeconds, functionTimeoutMs: config.functionTimeoutMs },
        );
      }
    })
    .catch(() => undefined);
}
