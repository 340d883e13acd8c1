import type { SQSClient } from "@aws-sdk/client-sqs";
import * as z from "zod";
import type { LazyClient } from "./clients";

/** What travels through SQS: a pointer, never the message itself. Schema version 1. */
export const RunQueueMessageSchema = z.lazy(() => z.object({ v: z.literal(1), runId: z.string().min(1) }));
export type RunQueueMessage = z.infer<typeof RunQueueMessageSchema>;

export interface RunQueue {
  send(message: { runId: string; sessionKey: string }): Promise<void>;
}

/** FIFO: group = session key (per-session order), deduplication = run id (no double intake). */
export function createRunQueue(lazySqs: LazyClient<SQSClient>, queueUrl: string): RunQueue {
  return {
    async send({ runId, sessionKey }) {
      const body: RunQueueMessage = { v: 1, runId };
      // The SDK package loads with the client (./clients.ts): never at the function's import.
      const [sqs, { SendMessageCommand }] = await Promise.all([lazySqs(), import("@aws-sdk/client-sqs")]);
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: queueUrl,
          MessageBody: JSON.stringify(body),
          MessageGroupId: sessionKey,
          MessageDeduplicationId: runId,
        }),
      );
    },
  };
}
