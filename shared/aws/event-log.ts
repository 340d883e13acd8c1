import { PutCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import * as z from "zod";
import { epochSeconds, keys, pad, prefixes } from "./keys";
import { conditionally, isExpired, type Db } from "./dynamo";
import { queryItems } from "./query-pages";
import { compactEventData, needsTextRestore, restoreEventText } from "../core/event-text";

export const EVENT_STREAMS = ["lifecycle", "assistant", "thinking", "tool", "compaction", "error", "approval"] as const;
export type EventStream = (typeof EVENT_STREAMS)[number];

/** One agent event as stored and as sent (`payload` of an `agent` event frame). Schema version 1. */
export const RunEventSchema = z.object({
  v: z.literal(1),
  runId: z.string(),
  sessionKey: z.string(),
  seq: z.number().int().min(1),
  stream: z.enum(EVENT_STREAMS),
  ts: z.number(),
  data: z.record(z.string(), z.unknown()),
  expiresAt: z.number().optional(),
});
export type RunEvent = z.infer<typeof RunEventSchema>;

/** Highest sequence number written for the run (0 when none). One page is the whole answer: `Limit: 1`, no filter. */
export async function lastEventSeq(db: Db, runId: string): Promise<number> {
  const [newest] = await newestEventItems(db, runId, 1, ["seq"]);
  return (newest?.seq as number | undefined) ?? 0;
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
  const items = await queryItems(
    db,
    {
      KeyConditionExpression: "pk = :pk AND sk BETWEEN :from AND :to",
      ExpressionAttributeValues: {
        ":pk": keys.run(runId).pk,
        ":from": `${prefixes.runEvent}${pad(afterSeq + 1)}`,
        ":to": `${prefixes.runEvent}${pad(untilSeq)}`,
      },
      ConsistentRead: true,
    },
    limit,
  );
  return items
    .filter((item) => !isExpired(item as { expiresAt?: number }, db.now()))
    .map(({ pk: _pk, sk: _sk, ...rest }) => RunEventSchema.parse(rest));
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

/** The run's newest `limit` events, newest first (without the cumulative text rebuilt). */
export async function lastEvents(db: Db, runId: string, limit = 1): Promise<RunEvent[]> {
  return (await newestEventItems(db, runId, limit)).map(({ pk: _pk, sk: _sk, ...rest }) => RunEventSchema.parse(rest));
}
