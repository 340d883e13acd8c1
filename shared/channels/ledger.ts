import { GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import * as z from "zod";
import { conditionally, type Db } from "../aws/dynamo";
import { keys } from "../aws/keys";

/**
 * Delivery ledger of one run's reply (item RUN#<runId> / DELIVERY, v1). The
 * platforms have no idempotency key for sends, so every message is claimed
 * here before it is sent and recorded after:
 *
 *   (absent) --claimPart--> sending --recordSent--> sent     (a part of the reply)
 *                              |
 *                              +-- crash: the outcome is unknown; the part is never sent
 *                                  again (at most once), the next finalize skips it
 *
 * except part 0 claimed by the streamed preview (`preview: true`): a crash
 * there may leave a partial text showing in a message nobody knows the id
 * of, so the final delivery takes the claim over (reclaimUnknownPreview) and
 * sends the final text as a new message: the chat always ends on it.
 *
 * A message that already exists (the streamed preview) is finished with an
 * edit, which repeats harmlessly: a crash around a final *edit* resends the
 * same edit, never a second message. `done` closes the ledger.
 *
 * `closing` fences the streamed preview (part 0) against an attempt that
 * outlives its run (an execution stopped or timed out while its Lambda still
 * streams): the final delivery writes what part 0 must end as *before* it
 * edits, and the preview records each of its edits only while `closing` is
 * absent. A preview edit that lands after the final one therefore fails its
 * record and puts the final text back, whatever the order the platform saw.
 *
 * `toolSends` lists what the messaging tool (`message`) delivered during the
 * run; it goes through the tool-call ledger (a mutating tool: a retried
 * attempt never sends it again), and reply shaping reads it to drop a final
 * answer that only repeats it.
 */
const PartSchema = z.lazy(() => z.object({
  state: z.enum(["sending", "sent", "cancelled", "failed"]),
  messageId: z.string().optional(),
  /** The text the message shows now (previews are edited until it equals the part). */
  text: z.string().optional(),
  error: z.string().optional(),
  /** failed: the platform answered 5xx / 429 / timed out, so a later try may succeed (shared/channels/notice-retry.ts). */
  retryable: z.boolean().optional(),
  /** sending: claimed by the streamed preview's first send (not the final reply's), see reclaimUnknownPreview. */
  preview: z.boolean().optional(),
}));
export type LedgerPart = z.infer<typeof PartSchema>;

const ToolSendSchema = z.lazy(() => z.object({ toolCallId: z.string(), messageIds: z.array(z.string()), text: z.string() }));
export type ToolSend = z.infer<typeof ToolSendSchema>;

const ClosingSchema = z.lazy(() => z.object({ text: z.string().optional(), remove: z.boolean().optional() }));
export type LedgerClosing = z.infer<typeof ClosingSchema>;

const LedgerSchema = z.lazy(() => z.object({
  v: z.literal(1),
  runId: z.string(),
  parts: z.record(z.string(), PartSchema),
  toolSends: z.array(ToolSendSchema).optional(),
  done: z.boolean().optional(),
  closing: ClosingSchema.optional(),
  outcome: z.string().optional(),
}));
export type DeliveryLedger = z.infer<typeof LedgerSchema>;

export async function openLedger(db: Db, runId: string): Promise<DeliveryLedger> {
  await conditionally(() =>
    db.doc.send(
      new PutCommand({ TableName: db.table, Item: { ...keys.deliveryLedger(runId), v: 1, runId, parts: {} }, ConditionExpression: "attribute_not_exists(pk)" }),
    ),
  );
  return (await readLedger(db, runId))!;
}

export async function readLedger(db: Db, runId: string): Promise<DeliveryLedger | undefined> {
  const out = await db.doc.send(new GetCommand({ TableName: db.table, Key: keys.deliveryLedger(runId), ConsistentRead: true }));
  if (!out.Item) return undefined;
  const { pk: _pk, sk: _sk, ...rest } = out.Item;
  return LedgerSchema.parse(rest);
}

/** Claims part `index` for sending; false when someone claimed it before (sent, or outcome unknown). */
export async function claimPart(db: Db, runId: string, index: number): Promise<boolean> {
  return conditionally(() => db.doc.send(setPart(db, runId, index, { state: "sending" }, { expression: "attribute_exists(pk) AND attribute_not_exists(parts.#i)" })));
}

/**
 * The streamed preview claims part 0 for its first send, marked `preview`,
 * and only while the final delivery has not begun (`closing`, `done`): after
 * that the final delivery owns part 0.
 */
export async function claimPreviewPart(db: Db, runId: string): Promise<boolean> {
  const expression = "attribute_exists(pk) AND attribute_not_exists(parts.#i) AND attribute_not_exists(closing) AND attribute_not_exists(done)";
  return conditionally(() => db.doc.send(setPart(db, runId, 0, { state: "sending", preview: true }, { expression })));
}

/** Part 0 is the preview's claim with an unknown outcome (its Lambda died, or it is still in flight). */
export function unknownPreviewPart(part: LedgerPart | undefined): boolean {
  return part?.state === "sending" && part.preview === true;
}

/**
 * The final delivery takes over part 0 from a preview claim whose outcome is
 * unknown (preview-sending -> sending, conditional): it then sends the final
 * text as a new message. False when the preview recorded (or released) its
 * message meanwhile, or another delivery took it over first.
 */
export async function reclaimUnknownPreview(db: Db, runId: string): Promise<boolean> {
  return conditionally(() => db.doc.send(setPart(db, runId, 0, { state: "sending" }, PREVIEW_CLAIMED)));
}

/**
 * A preview that raced the final delivery records part 0 as its own message
 * only while part 0 is still its claim or its message; false when the final
 * delivery took the claim over and sent the final text as a message of its own.
 */
export async function recordPreviewRestored(db: Db, runId: string, part: LedgerPart): Promise<boolean> {
  const condition = { ...PREVIEW_CLAIMED, expression: `parts.#i.messageId = :mine OR (${PREVIEW_CLAIMED.expression})`, values: { ...PREVIEW_CLAIMED.values, ":mine": part.messageId } };
  return conditionally(() => db.doc.send(setPart(db, runId, 0, part, condition)));
}

export async function recordPart(db: Db, runId: string, index: number, part: LedgerPart): Promise<void> {
  await db.doc.send(setPart(db, runId, index, part));
}

/**
 * Records a preview edit of part 0, unless the final delivery has begun
 * (`closing` or `done`): false then, and the caller must put the final state
 * back (ChannelPreview's `restoreFinal`) because its edit may have landed
 * after the final one.
 */
export async function recordPreviewPart(db: Db, runId: string, part: LedgerPart): Promise<boolean> {
  return conditionally(() => db.doc.send(setPart(db, runId, 0, part, { expression: "attribute_not_exists(closing) AND attribute_not_exists(done)" })));
}

/** A condition on the ledger item for setPart; `#i` names the part. */
interface PartCondition {
  expression: string;
  names?: Record<string, string>;
  values?: Record<string, unknown>;
}

/** Part 0 is still the preview's claim, outcome unknown. */
const PREVIEW_CLAIMED: PartCondition = { expression: "parts.#i.#state = :sending AND parts.#i.preview = :t", names: { "#state": "state" }, values: { ":sending": "sending", ":t": true } };

function setPart(db: Db, runId: string, index: number, part: LedgerPart, condition?: PartCondition): UpdateCommand {
  return new UpdateCommand({
    TableName: db.table,
    Key: keys.deliveryLedger(runId),
    UpdateExpression: "SET parts.#i = :part",
    ...(condition ? { ConditionExpression: condition.expression } : {}),
    ExpressionAttributeNames: { "#i": String(index), ...condition?.names },
    ExpressionAttributeValues: { ":part": PartSchema.parse(part), ...condition?.values },
  });
}

/** What part 0 must end as, written by the final delivery before it touches the message (see `closing`). */
export async function markClosing(db: Db, runId: string, closing: LedgerClosing): Promise<void> {
  await db.doc.send(
    new UpdateCommand({
      TableName: db.table,
      Key: keys.deliveryLedger(runId),
      UpdateExpression: "SET closing = :c",
      ExpressionAttributeValues: { ":c": ClosingSchema.parse(closing) },
    }),
  );
}

/**
 * Claims a part whose send failed retryably for one more try (failed ->
 * sending, conditional): of two retries racing (two sweeps, a sweep and a
 * redelivered webhook) only one sends. False when it is no longer such a part.
 */
export async function reclaimFailedPart(db: Db, runId: string, index: number): Promise<boolean> {
  const condition = { expression: "parts.#i.#state = :failed AND parts.#i.retryable = :t", names: { "#state": "state" }, values: { ":failed": "failed", ":t": true } };
  return conditionally(() => db.doc.send(setPart(db, runId, index, { state: "sending" }, condition)));
}

/** A part a later try may still send: its send failed retryably. */
export function retryablePart(part: LedgerPart | undefined): boolean {
  return part?.state === "failed" && part.retryable === true;
}

/** Frees a claim whose send failed cleanly (nothing went out), so the final delivery sends it. */
export async function releasePart(db: Db, runId: string, index: number): Promise<void> {
  await conditionally(() =>
    db.doc.send(
      new UpdateCommand({
        TableName: db.table,
        Key: keys.deliveryLedger(runId),
        UpdateExpression: "REMOVE parts.#i",
        ConditionExpression: "parts.#i.#state = :sending",
        ExpressionAttributeNames: { "#i": String(index), "#state": "state" },
        ExpressionAttributeValues: { ":sending": "sending" },
      }),
    ),
  );
}

export async function closeLedger(db: Db, runId: string, outcome: string): Promise<void> {
  await db.doc.send(
    new UpdateCommand({
      TableName: db.table,
      Key: keys.deliveryLedger(runId),
      UpdateExpression: "SET done = :t, outcome = if_not_exists(outcome, :o)",
      ExpressionAttributeValues: { ":t": true, ":o": outcome },
    }),
  );
}

/** A message the messaging tool delivered (after the platform accepted it). */
export async function recordToolSend(db: Db, runId: string, send: ToolSend): Promise<void> {
  await openLedger(db, runId);
  await db.doc.send(
    new UpdateCommand({
      TableName: db.table,
      Key: keys.deliveryLedger(runId),
      UpdateExpression: "SET toolSends = list_append(if_not_exists(toolSends, :none), :send)",
      ExpressionAttributeValues: { ":none": [], ":send": [ToolSendSchema.parse(send)] },
    }),
  );
}
