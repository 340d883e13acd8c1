import { GetCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import * as z from "zod";
import { epochSeconds, keys } from "./keys";
import type { Db } from "./dynamo";

/**
 * Why a run-queue message failed. SQS redrives a message to the DLQ after
 * its last failed receive and keeps its MessageId, so an operator looking at
 * a DLQ message finds the reason here under that id. Kept as long as the DLQ
 * keeps messages (14 days).
 */
export const DispatchFailureSchema = z.lazy(() => z.object({
  v: z.literal(1),
  messageId: z.string(),
  groupId: z.string().optional(),
  runId: z.string().optional(),
  errorName: z.string(),
  reason: z.string(),
  receiveCount: z.number().int(),
  failures: z.number().int(),
  firstFailedAt: z.number(),
  lastFailedAt: z.number(),
  expiresAt: z.number(),
}));
export type DispatchFailure = z.infer<typeof DispatchFailureSchema>;

const RETENTION_SECONDS = 14 * 86_400;
const MAX_REASON_CHARS = 2000;

export interface FailedMessage {
  messageId: string;
  groupId?: string;
  runId?: string;
  receiveCount: number;
}

export async function recordDispatchFailure(db: Db, message: FailedMessage, error: unknown): Promise<void> {
  const now = db.now();
  const errorName = (error as { name?: string } | undefined)?.name ?? "Error";
  const reason = `${errorName}: ${error instanceof Error ? error.message : String(error)}`.slice(0, MAX_REASON_CHARS);
  const values: Record<string, unknown> = {
    ":v": 1,
    ":id": message.messageId,
    ":name": errorName,
    ":reason": reason,
    ":count": message.receiveCount,
    ":now": now,
    ":exp": epochSeconds(now) + RETENTION_SECONDS,
    ":one": 1,
  };
  const sets = ["v = :v", "messageId = :id", "errorName = :name", "reason = :reason", "receiveCount = :count", "lastFailedAt = :now", "firstFailedAt = if_not_exists(firstFailedAt, :now)", "expiresAt = :exp"];
  if (message.groupId) (sets.push("groupId = :group"), (values[":group"] = message.groupId));
  if (message.runId) (sets.push("runId = :run"), (values[":run"] = message.runId));
  await db.doc.send(
    new UpdateCommand({
      TableName: db.table,
      Key: keys.dispatchFailure(message.messageId),
      UpdateExpression: `SET ${sets.join(", ")} ADD failures :one`,
      ExpressionAttributeValues: values,
    }),
  );
}

export async function getDispatchFailure(db: Db, messageId: string): Promise<DispatchFailure | undefined> {
  const out = await db.doc.send(new GetCommand({ TableName: db.table, Key: keys.dispatchFailure(messageId), ConsistentRead: true }));
  if (!out.Item) return undefined;
  const { pk: _pk, sk: _sk, ...rest } = out.Item;
  return DispatchFailureSchema.parse(rest);
}
