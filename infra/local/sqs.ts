/**
 * Local SQS: fauxqs (SQS JSON protocol) in-process, and queue creation
 * through the real SQS client so the same code creates the queues in
 * LocalStack or AWS.
 *
 * fauxqs semantics this project relies on (pinned by
 * test/local/sqs-event-source.test.ts): FIFO deduplication by
 * MessageDeduplicationId (5-minute window, queue scope), per-group order and
 * group locking while a message is in flight, visibility timeout, redrive to
 * the DLQ once ApproximateReceiveCount exceeds maxReceiveCount, and the
 * queue's MaximumMessageSize. Gaps against AWS:
 * - a FIFO ReceiveMessage returns at most ONE message per message group
 *   (AWS returns several of a group, in order), so locally a batch never
 *   holds two messages of one group and a handler's "fail the rest of the
 *   group" logic (SqsFifoPartialProcessor) is not exercised;
 * - the dedup cache holds 10,000 ids; past that, older ids are forgotten
 *   before their 5 minutes;
 * - its default MaximumMessageSize is 1 MiB (AWS's current maximum). Our
 *   queues set 256 KiB explicitly, the limit the architecture enforces, so
 *   AWS and local reject the same messages (InvalidParameterValue).
 * - startFauxqs() always listens on 0.0.0.0; we build the same app with
 *   fauxqs's exported buildApp() and listen on loopback instead, so an
 *   unauthenticated queue is never exposed to the network.
 */
import { CreateQueueCommand, GetQueueAttributesCommand, type SQSClient } from "@aws-sdk/client-sqs";
import { buildApp } from "fauxqs";
import type { AddressInfo } from "node:net";

/** The message size quota the project enforces (body plus attributes). */
export const SQS_MESSAGE_LIMIT_BYTES = 256 * 1024;
/** The longest retention SQS allows: a DLQ keeps its messages for inspection. */
const DLQ_RETENTION_SECONDS = 14 * 24 * 60 * 60;

export interface LocalSqs {
  /** Give this to `new SQSClient({ endpoint })`. */
  endpoint: string;
  port: number;
  stop(): Promise<void>;
}

export interface StartLocalSqsOptions {
  /** 0 picks a free port. */
  port: number;
  /** Interface to listen on; loopback by default. */
  host?: string;
}

export async function startLocalSqs(options: StartLocalSqsOptions): Promise<LocalSqs> {
  const host = options.host ?? "127.0.0.1";
  const app = buildApp({ logger: false });
  await app.listen({ port: options.port, host });
  const { port } = app.server.address() as AddressInfo;
  return {
    endpoint: `http://${host.includes(":") ? `[${host}]` : host}:${port}`,
    port,
    stop: async () => {
      await app.close();
    },
  };
}

export interface FifoQueueWithDlqOptions {
  /** Base name: creates `<name>.fifo` and `<name>-dlq.fifo`. */
  name: string;
  visibilityTimeoutSeconds: number;
  maxReceiveCount: number;
}

export interface FifoQueueWithDlq {
  queueUrl: string;
  queueArn: string;
  dlqUrl: string;
  dlqArn: string;
}

const FIFO_ATTRIBUTES = {
  FifoQueue: "true",
  // Intake always sends an explicit MessageDeduplicationId (the run id).
  ContentBasedDeduplication: "false",
  MaximumMessageSize: String(SQS_MESSAGE_LIMIT_BYTES),
};

/** Creates (idempotently, as CreateQueue is) a FIFO queue and its FIFO dead-letter queue. */
export async function createFifoQueueWithDlq(sqs: SQSClient, options: FifoQueueWithDlqOptions): Promise<FifoQueueWithDlq> {
  const dlq = await createQueue(sqs, `${options.name}-dlq.fifo`, {
    ...FIFO_ATTRIBUTES,
    MessageRetentionPeriod: String(DLQ_RETENTION_SECONDS),
  });
  const queue = await createQueue(sqs, `${options.name}.fifo`, {
    ...FIFO_ATTRIBUTES,
    VisibilityTimeout: String(options.visibilityTimeoutSeconds),
    RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlq.arn, maxReceiveCount: options.maxReceiveCount }),
  });
  return { queueUrl: queue.url, queueArn: queue.arn, dlqUrl: dlq.url, dlqArn: dlq.arn };
}

async function createQueue(
  sqs: SQSClient,
  name: string,
  attributes: Record<string, string>,
): Promise<{ url: string; arn: string }> {
  const created = await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
  const url = created.QueueUrl;
  if (!url) throw new Error(`CreateQueue returned no QueueUrl for ${name}`);
  const described = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ["QueueArn"] }));
  const arn = described.Attributes?.QueueArn;
  if (!arn) throw new Error(`GetQueueAttributes returned no QueueArn for ${name}`);
  return { url, arn };
}
