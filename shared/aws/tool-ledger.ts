import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import * as z from "zod";
import { MessageSchema } from "../core/message-schema";
import type { AssistantMessage } from "../core/messages";
import type { LedgerEntry, PendingTurn, ToolLedger } from "../agent/tool-ledger";
import { byteSize, conditionally, type Db } from "./dynamo";
import { epochSeconds, keys, MAX_ITEM_BYTES } from "./keys";

/**
 * The tool-call ledger in DynamoDB (see shared/agent/tool-ledger.ts for the
 * timeline). Single-item conditional writes only:
 *   markStarted    PutItem TOOL#<id>          IF attribute_not_exists(pk)
 *   markCompleted  UpdateItem TOOL#<id>       IF #status = started
 *   pending turn   PutItem / DeleteItem PENDING_TURN (one per run; overwritten by the next tool turn)
 * Items are schema-versioned, parsed on read, and expire with the run's event log.
 */
const LedgerItemSchema = z.lazy(() => z.discriminatedUnion("status", [
  z.object({ v: z.literal(1), toolCallId: z.string(), toolName: z.string(), status: z.literal("started"), startedAt: z.number() }),
  z.object({
    v: z.literal(1),
    toolCallId: z.string(),
    toolName: z.string(),
    status: z.literal("completed"),
    startedAt: z.number(),
    completedAt: z.number(),
    result: z.object({ content: z.string(), isError: z.boolean() }),
  }),
]));

const PendingTurnSchema = z.lazy(() => z.object({ v: z.literal(1), message: MessageSchema, createdAt: z.number() }));

export interface DynamoLedgerOptions {
  /** How long ledger items outlive the run (same as its event log). */
  retentionDays: number;
  /**
   * Whether the run record, as read before this attempt, carries `pendingTurnAt`.
   * false: no tool turn was ever saved, there is nothing to resume, so the
   * pending turn is not read. Every save marks the record first (unless it is
   * known marked: true), so a turn saved by an earlier attempt, before this
   * record was read, is never missed. Unknown (undefined): read, and mark.
   */
  runMarked?: boolean;
}

export function createDynamoToolLedger(db: Db, runId: string, options: DynamoLedgerOptions): ToolLedger {
  const expiresAt = () => epochSeconds(db.now()) + options.retentionDays * 86_400;
  // The run record carries the mark (once per run: a marked record is not written again).
  let marked = options.runMarked === true;
  return {
    async get(toolCallId) {
      const out = await db.doc.send(new GetCommand({ TableName: db.table, Key: keys.toolCall(runId, toolCallId), ConsistentRead: true }));
      if (!out.Item) return undefined;
      const { v: _v, ...entry } = LedgerItemSchema.parse(strip(out.Item));
      return entry as LedgerEntry;
    },
    markStarted(toolCallId, toolName) {
      const item = { ...keys.toolCall(runId, toolCallId), v: 1, toolCallId, toolName, status: "started", startedAt: db.now(), expiresAt: expiresAt() };
      return conditionally(() => db.doc.send(new PutCommand({ TableName: db.table, Item: item, ConditionExpression: "attribute_not_exists(pk)" })));
    },
    async markCompleted(toolCallId, result) {
      await conditionally(() =>
        db.doc.send(
          new UpdateCommand({
            TableName: db.table,
            Key: keys.toolCall(runId, toolCallId),
            UpdateExpression: "SET #status = :completed, completedAt = :now, #result = :result",
            ConditionExpression: "#status = :started",
            ExpressionAttributeNames: { "#status": "status", "#result": "result" },
            ExpressionAttributeValues: { ":completed": "completed", ":started": "started", ":now": db.now(), ":result": result },
          }),
        ),
      );
    },
    async savePendingTurn(message) {
      // The mark first: an attempt that reads the record afterwards knows to look for the turn.
      if (!marked) await markPendingTurn(db, runId);
      marked = true;
      const item = { ...keys.pendingToolTurn(runId), v: 1, message, createdAt: db.now(), expiresAt: expiresAt() };
      // A turn too large to keep cannot be resumed; the ledger entries still prevent blind re-runs of its calls.
      if (byteSize(item) > MAX_ITEM_BYTES - 1024) return;
      await db.doc.send(new PutCommand({ TableName: db.table, Item: item }));
    },
    async loadPendingTurn(): Promise<PendingTurn | undefined> {
      if (options.runMarked === false && !marked) return undefined;
      const out = await db.doc.send(new GetCommand({ TableName: db.table, Key: keys.pendingToolTurn(runId), ConsistentRead: true }));
      if (!out.Item) return undefined;
      const parsed = PendingTurnSchema.parse(strip(out.Item));
      return parsed.message.role === "assistant" ? { message: parsed.message as AssistantMessage, createdAt: parsed.createdAt } : undefined;
    },
    async clearPendingTurn() {
      await db.doc.send(new DeleteCommand({ TableName: db.table, Key: keys.pendingToolTurn(runId) }));
    },
  };
}

/**
 * `pendingTurnAt` on the run record: a tool turn of this run may be pending
 * (kept once set). Never creates a bare run item: with no run record there is
 * no attempt that could read it and skip the turn, so there is nothing to mark.
 */
async function markPendingTurn(db: Db, runId: string): Promise<void> {
  await conditionally(() =>
    db.doc.send(
      new UpdateCommand({
        TableName: db.table,
        Key: keys.run(runId),
        UpdateExpression: "SET pendingTurnAt = if_not_exists(pendingTurnAt, :now)",
        ConditionExpression: "attribute_exists(pk)",
        ExpressionAttributeValues: { ":now": db.now() },
      }),
    ),
  );
}

function strip(item: Record<string, unknown>): Record<string, unknown> {
  const { pk: _pk, sk: _sk, expiresAt: _expiresAt, ...rest } = item;
  return rest;
}
