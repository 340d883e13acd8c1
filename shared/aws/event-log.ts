import { PutCommand, QueryCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import * as z from "zod";
import { epochSeconds, keys, pad, prefixes } from "./keys";
import { conditionally, isExpired, type Db } from "./dynamo";
import { queryItems } from "./query-pages";
import { compactEventData, needsTextRestore, restoreEventText } from "../core/event-text";

export const EVENT_STREAMS = ["lifecycle", "assistant", "thinking", "tool", "compaction", "error", "approval"] as const;
export type EventStream = (typeof EVENT_STREAMS)[number];

/** One agent event as stored and as sent (`payload` of an `agent` event frame). Schema version 1. */
// Built on first parse (z.lazy): a function that never reads these pays nothing for them at import (issue 15).
export const RunEventSchema = z.lazy(() => z.object({
  v: z.literal(1),
  runId: z.string(),
  sessionKey: z.string(),
  seq: z.number().int().min(1),
  stream: z.enum(EVENT_STREAMS),
  ts: z.number(),
  data: z.record(z.string(), z.unknown()),
  expiresAt: z.number().optional(),
}));
export type RunEvent = z.infer<typeof RunEventSchema>;

/**
 * Schema version 2: one item holds a batch of consecutive events (the
 * emitter's write, docs/protocol.md "Event log"), keyed by its first seq.
 * `seq` is its last one (named as v1's, so the newest-item reads serve both);
 * `reservedThrough` is the highest seq its writer may post before its next
 * write (a retry starts after it). Readers flatten it into v1-shaped events;
 * v1 items (one event each) are read as before.
 */
const StoredEventSchema = z.lazy(() => z.object({ seq: z.number().int().min(1), stream: z.enum(EVENT_STREAMS), ts: z.number(), data: z.record(z.string(), z.unknown()) }));
// Built on first parse (z.lazy): a function that never reads these pays nothing for them at import (issue 15).
export const RunEventBatchSchema = z.lazy(() => z.object({
  v: z.literal(2),
  runId: z.string(),
  sessionKey: z.string(),
  from: z.number().int().min(1),
  seq: z.number().int().min(1),
  reservedThrough: z.number().int().min(1),
  ts: z.number(),
  events: z.array(StoredEventSchema).min(1),
  expiresAt: z.number().optional(),
}));

/** The most events one batch item holds: readers look this far back for an item that straddles their cursor. */
export const MAX_BATCH_EVENTS = 16;

/** Highest sequence number logged for the run (0 when none): where a reader resumes from. */
export async function lastEventSeq(db: Db, runId: string): Promise<number> {
  return (await eventLogHead(db, runId)).logged;
}

export interface EventLogHead {
  /** Highest seq in the log. */
  logged: number;
  /** Highest seq its last writer could have posted (>= logged): the next writer starts after it. */
  reservedThrough: number;
}

/** The newest item's seqs. One page is the whole answer: `Limit: 1`, no filter. */
export async function eventLogHead(db: Db, runId: string): Promise<EventLogHead> {
  const [newest] = await newestEventItems(db, runId, 1, ["seq", "reservedThrough"]);
  const logged = (newest?.seq as number | undefined) ?? 0;
  return { logged, reservedThrough: Math.max(logged, (newest?.reservedThrough as number | undefined) ?? 0) };
}

/**
 * The run's newest `limit` event items, newest first, strongly consistent;
 * `attributes` to read only those (each named through a placeholder, so a
 * DynamoDB reserved word such as `ts` needs no care at the call site).
 */
export async function newestEventItems(db: Db, runId: string, limit: number, attributes?: readonly string[]): Promise<Record<string, unknown>[]> {
  const out = await db.doc.send(
    new QueryCommand({
      TableName: db.table,
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
      ExpressionAttributeValues: { ":pk": keys.run(runId).pk, ":prefix": prefixes.runEvent },
      ScanIndexForward: false,
      Limit: limit,
      ConsistentRead: true,
      ...(attributes?.length ? projectionOf(attributes) : {}),
    }),
  );
  return out.Items ?? [];
}

function projectionOf(attributes: readonly string[]) {
  const names = Object.fromEntries(attributes.map((name, i) => [`#p${i}`, name]));
  return { ProjectionExpression: Object.keys(names).join(", "), ExpressionAttributeNames: names };
}

/** Writes the event at its sequence number; false if that number is taken (another writer raced). */
export async function appendEvent(db: Db, event: RunEvent): Promise<boolean> {
  // Stored without the cumulative text (rebuilt on read): the log grows linearly with an answer.
  const item = { ...keys.runEvent(event.runId, event.seq), ...event, data: compactEventData(event.data) };
  return conditionally(() =>
    db.doc.send(new PutCommand({ TableName: db.table, Item: item, ConditionExpression: "attribute_not_exists(pk)" })),
  );
}

export interface EventBatch {
  /** Consecutive events of one run, at most MAX_BATCH_EVENTS. */
  events: RunEvent[];
  reservedThrough: number;
}

/** Writes the events as one v2 item at the first one's seq; false if that seq is taken (another writer raced). */
export async function appendEventBatch(db: Db, { events, reservedThrough }: EventBatch): Promise<boolean> {
  const first = events[0]!;
  const last = events[events.length - 1]!;
  if (events.length > MAX_BATCH_EVENTS || events.some((e, i) => e.seq !== first.seq + i)) throw new Error("an event batch holds at most 16 consecutive events");
  const item = {
    ...keys.runEvent(first.runId, first.seq),
    v: 2,
    runId: first.runId,
    sessionKey: first.sessionKey,
    from: first.seq,
    seq: last.seq,
    reservedThrough: Math.max(reservedThrough, last.seq),
    ts: last.ts,
    events: events.map(({ seq, stream, ts, data }) => ({ seq, stream, ts, data: compactEventData(data) })),
    ...(last.expiresAt !== undefined ? { expiresAt: last.expiresAt } : {}),
  };
  return conditionally(() =>
    db.doc.send(new PutCommand({ TableName: db.table, Item: item, ConditionExpression: "attribute_not_exists(pk)" })),
  );
}

/** A writer that closes cleanly gives back the seqs it reserved past its last item (so the next writer needs no filler). */
export async function releaseReservation(db: Db, runId: string, from: number, reserved: number): Promise<boolean> {
  return conditionally(() =>
    db.doc.send(
      new UpdateCommand({
        TableName: db.table,
        Key: keys.runEvent(runId, from),
        UpdateExpression: "SET reservedThrough = seq",
        ConditionExpression: "reservedThrough = :reserved",
        ExpressionAttributeValues: { ":reserved": reserved },
      }),
    ),
  );
}

/** The events an item holds: itself (v1) or its batch flattened (v2), in seq order. */
export function eventsOfItem(item: Record<string, unknown>): RunEvent[] {
  const { pk: _pk, sk: _sk, ...rest } = item;
  if (rest.v !== 2) return [RunEventSchema.parse(rest)];
  const batch = RunEventBatchSchema.parse(rest);
  const expiry = batch.expiresAt !== undefined ? { expiresAt: batch.expiresAt } : {};
  return batch.events.map((event) => ({ v: 1 as const, runId: batch.runId, sessionKey: batch.sessionKey, ...event, ...expiry }));
}

/** Events with seq > afterSeq, in order (replay after a reconnect), with their cumulative text rebuilt. */
export async function readEvents(db: Db, runId: string, afterSeq = 0, limit = 1000): Promise<RunEvent[]> {
  const page = await queryEvents(db, runId, afterSeq, limit);
  if (!page.some((event) => needsTextRestore(event.data))) return page;
  // Rebuilding `text` needs the deltas before the page too (a rare read: reconnects and REST paging).
  const before = afterSeq > 0 ? await queryAllEvents(db, runId, 0, afterSeq) : [];
  return restoreEventText([...before, ...page]).slice(before.length);
}

async function queryAllEvents(db: Db, runId: string, afterSeq: number, untilSeq: number): Promise<RunEvent[]> {
  const events: RunEvent[] = [];
  let from = afterSeq;
  while (from < untilSeq) {
    const page = await queryEvents(db, runId, from, 1000, untilSeq);
    if (page.length === 0) break;
    events.push(...page);
    from = page[page.length - 1].seq;
  }
  return events;
}

async function queryEvents(db: Db, runId: string, afterSeq: number, limit: number, untilSeq = MAX_SEQ): Promise<RunEvent[]> {
  // A batch item is keyed by its first seq: one that straddles `afterSeq` starts up to MAX_BATCH_EVENTS - 1 before it.
  const fromKey = Math.max(1, afterSeq + 2 - MAX_BATCH_EVENTS);
  const items = await queryItems(
    db,
    {
      KeyConditionExpression: "pk = :pk AND sk BETWEEN :from AND :to",
      ExpressionAttributeValues: {
        ":pk": keys.run(runId).pk,
        ":from": `${prefixes.runEvent}${pad(fromKey)}`,
        ":to": `${prefixes.runEvent}${pad(untilSeq)}`,
      },
      ConsistentRead: true,
    },
    limit + (afterSeq + 1 - fromKey),
  );
  return items
    .filter((item) => !isExpired(item as { expiresAt?: number }, db.now()))
    .flatMap(eventsOfItem)
    .filter((event) => event.seq > afterSeq && event.seq <= untilSeq)
    .slice(0, limit);
}

const MAX_SEQ = 999_999_999_999;

/**
 * Run records and their events share one retention setting
 * (`events.retentionDays`): the run record expires `retentionDays` after it
 * ended (runRecordExpiry), an event `retentionDays` after it was written plus
 * the longest a run can last, so no event of a run expires before its record
 * ("events as long as the run record").
 */
export const RUN_LIFETIME_SLACK_SECONDS = 49 * 3600;

export function eventExpiry(nowMs: number, retentionDays: number): number {
  return epochSeconds(nowMs) + retentionDays * 86_400 + RUN_LIFETIME_SLACK_SECONDS;
}

/** When an ended run's record expires (DynamoDB TTL on `expiresAt`; readers treat it as absent after). */
export function runRecordExpiry(endedAtMs: number, retentionDays: number): number {
  return epochSeconds(endedAtMs) + retentionDays * 86_400;
}

/** How many items the run's log holds (each was one write): the bench's event-log write count. */
export async function eventLogItemCount(db: Db, runId: string): Promise<number> {
  const items = await queryItems(db, {
    KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
    ExpressionAttributeValues: { ":pk": keys.run(runId).pk, ":prefix": prefixes.runEvent },
    ProjectionExpression: "sk",
  });
  return items.length;
}

/** The run's newest `limit` events, newest first (without the cumulative text rebuilt). */
export async function lastEvents(db: Db, runId: string, limit = 1): Promise<RunEvent[]> {
  // Each item holds at least one event, so `limit` items hold enough.
  return (await newestEventItems(db, runId, limit)).flatMap((item) => eventsOfItem(item).reverse()).slice(0, limit);
}
