import { PutCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { z } from "zod";
import { keys } from "./keys";
import type { Db } from "./dynamo";
import { AttemptOutcomeSchema } from "../core/run-loop";
import { capText } from "../core/truncate";

/** Diagnostics of one attempt (schema version 1): what the outer loop and finalize read back. */
export const AttemptRecordSchema = z.object({
  v: z.literal(1),
  runId: z.string(),
  iteration: z.number().int(),
  model: z.string(),
  offline: z.boolean(),
  outcome: AttemptOutcomeSchema,
  finalText: z.string(),
  usage: z.object({ input: z.number(), output: z.number(), cacheRead: z.number(), cacheWrite: z.number() }),
  modelTurns: z.number().int(),
  toolCalls: z.number().int(),
  toolErrors: z.array(z.object({ toolName: z.string(), message: z.string() })),
  stopReason: z.string().optional(),
  startedAt: z.number(),
  endedAt: z.number(),
});
export type AttemptRecord = z.infer<typeof AttemptRecordSchema>;

/** Keeps the record well inside DynamoDB's 400 KB item limit. */
const MAX_STORED_TEXT = 300_000;

export async function putAttempt(db: Db, record: AttemptRecord): Promise<void> {
  const stored = AttemptRecordSchema.parse({ ...record, finalText: capText(record.finalText, MAX_STORED_TEXT).text });
  await db.doc.send(new PutCommand({ TableName: db.table, Item: { ...keys.attempt(record.runId, record.iteration), ...stored } }));
}

export async function listAttempts(db: Db, runId: string): Promise<AttemptRecord[]> {
  const out = await db.doc.send(
    new QueryCommand({
      TableName: db.table,
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
      ExpressionAttributeValues: { ":pk": keys.run(runId).pk, ":prefix": "ATTEMPT#" },
      ConsistentRead: true,
    }),
  );
  return (out.Items ?? []).map(({ pk: _pk, sk: _sk, ...rest }) => AttemptRecordSchema.parse(rest));
}

