import { PutCommand } from "@aws-sdk/lib-dynamodb";
import * as z from "zod";
import { keys } from "./keys";
import type { Db } from "./dynamo";
import { queryItems } from "./query-pages";
import { AttemptOutcomeSchema, DecisionSchema } from "../core/run-loop";
import { ToolMetaSchema, UsageSchema } from "../core/attempt-result";
import { capText } from "../core/truncate";

/** Diagnostics of one attempt (schema version 1): what the outer loop and finalize read back. */
// Built on first parse (z.lazy): a function that never reads these pays nothing for them at import (issue 15).
export const AttemptRecordSchema = z.lazy(() => z.object({
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
  // Added with the structured attempt result (core/attempt-result, v1); optional so older records parse.
  // Records written before issue 15's part 12 stored the blocks themselves; newer ones store
  // `textBlockLengths` and get the blocks back from finalText when read (fromStored).
  textBlocks: z.array(z.string()).optional(),
  tools: z.array(ToolMetaSchema).optional(),
  messagingToolTexts: z.array(z.string()).optional(),
  wastedUsage: UsageSchema.optional(),
  costUsd: z.number().optional(),
  compactionCount: z.number().int().optional(),
  hadSideEffects: z.boolean().optional(),
  uncertainToolCalls: z.array(z.object({ toolCallId: z.string(), name: z.string() })).optional(),
  /** The system prompt the attempt sent, in characters (compaction after it sizes with it). */
  systemPromptChars: z.number().int().min(0).optional(),
  /** What the outer loop decided after this attempt (shared/aws/attempt-decisions.ts); absent until decided. */
  decision: DecisionSchema.optional(),
  decidedAt: z.number().optional(),
}));
export type AttemptRecord = z.infer<typeof AttemptRecordSchema>;

/**
 * The stored form: the text blocks as their lengths. finalText is their concatenation, so storing
 * both doubled the item (a 5 KB answer wrote 9 WRU instead of 5).
 */
const StoredAttemptSchema = z.lazy(() => z.object({ textBlockLengths: z.array(z.number().int().min(0)).optional() }).loose());

/** Keeps the record well inside DynamoDB's 400 KB item limit. */
const MAX_STORED_TEXT = 300_000;

/** Text blocks repeat finalText; they are kept only while both fit comfortably. */
const MAX_TEXT_BLOCKS_CHARS = 100_000;
/** Tool error messages only feed the fallback reply ("<tool> failed"); the transcript has them in full. */
const MAX_STORED_TOOL_ERROR = 2000;
const MAX_STORED_TOOL_ERRORS = 20;
const MAX_STORED_TOOL_METAS = 500;

/** Writes the record (capped to fit an item) and returns it as read back (text blocks rebuilt). */
export async function putAttempt(db: Db, record: AttemptRecord): Promise<AttemptRecord> {
  const { textBlocks, ...rest } = record;
  const keepBlocks = textBlocks !== undefined && record.finalText.length <= MAX_TEXT_BLOCKS_CHARS;
  const stored = AttemptRecordSchema.parse({
    ...rest,
    ...(keepBlocks ? { textBlocks } : {}),
    finalText: capText(record.finalText, MAX_STORED_TEXT).text,
    ...(record.tools ? { tools: record.tools.slice(-MAX_STORED_TOOL_METAS) } : {}),
    toolErrors: record.toolErrors.slice(-MAX_STORED_TOOL_ERRORS).map((e) => ({ ...e, message: capText(e.message, MAX_STORED_TOOL_ERROR).text })),
  });
  await db.doc.send(new PutCommand({ TableName: db.table, Item: { ...keys.attempt(record.runId, record.iteration), ...toStored(stored) } }));
  return stored;
}

/** Blocks that concatenate to finalText are stored as their lengths; anything else as it is. */
function toStored(record: AttemptRecord): Record<string, unknown> {
  const { textBlocks, ...rest } = record;
  if (textBlocks === undefined) return rest;
  if (textBlocks.join("") !== record.finalText) return record;
  return { ...rest, textBlockLengths: textBlocks.map((block) => block.length) };
}

/** The record as written: `textBlockLengths` cut finalText back into its blocks. */
function fromStored(item: Record<string, unknown>): AttemptRecord {
  const { textBlockLengths, ...rest } = StoredAttemptSchema.parse(item);
  const record = AttemptRecordSchema.parse(rest);
  if (textBlockLengths === undefined || record.textBlocks !== undefined) return record;
  let at = 0;
  const textBlocks = textBlockLengths.map((length) => record.finalText.slice(at, (at += length)));
  return { ...record, textBlocks };
}

export async function listAttempts(db: Db, runId: string): Promise<AttemptRecord[]> {
  const items = await queryItems(db, {
    KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
    ExpressionAttributeValues: { ":pk": keys.run(runId).pk, ":prefix": "ATTEMPT#" },
    ConsistentRead: true,
  });
  return items.map(({ pk: _pk, sk: _sk, ...rest }) => fromStored(rest));
}

