import { PutCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { z } from "zod";
import { epochSeconds, keys, pad, prefixes } from "./keys";
import { conditionally, isExpired, type Db } from "./dynamo";

export const EVENT_STREAMS = ["lifecycle", "assistant", "thinking", "tool", "compaction", "error"] as const;
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

/** Highest sequence number written for the run (0 when none). */
export async function lastEventSeq(db: Db, runId: string): Promise<number> {
  const out = await db.doc.send(
    new QueryCommand({
      TableName: db.table,
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
      ExpressionAttributeValues: { ":pk": keys.run(runId).pk, ":prefix": prefixes.runEvent },
      ScanIndexForward: false,
      Limit: 1,
      ConsistentRead: true,
      ProjectionExpression: "seq",
    }),
  );
  return (out.Items?.[0]?.seq as number | undefined) ?? 0;
}

/** Writes the event at its sequence number; false if that number is taken (another writer raced). */
export async function appendEvent(db: Db, event: RunEvent): Promise<boolean> {
  const item = { ...keys.runEvent(event.runId, event.seq), ...event };
  return conditionally(() =>
    db.doc.send(new PutCommand({ TableName: db.table, Item: item, ConditionExpression: "attribute_not_exists(pk)" })),
  );
}

/** Events with seq > afterSeq, in order (replay after a reconnect). */
export async function readEvents(db: Db, runId: string, afterSeq = 0, limit = 1000): Promise<RunEvent[]> {
  const out = await db.doc.send(
    new QueryCommand({
      TableName: db.table,
      KeyConditionExpression: "pk = :pk AND sk > :after",
      ExpressionAttributeValues: { ":pk": keys.run(runId).pk, ":after": `${prefixes.runEvent}${pad(afterSeq)}` },
      ConsistentRead: true,
      Limit: limit,
    }),
  );
  return (out.Items ?? [])
    .filter((item) => String(item.sk).startsWith(prefixes.runEvent))
    .filter((item) => !isExpired(item as { expiresAt?: number }, db.now()))
    .map(({ pk: _pk, sk: _sk, ...rest }) => RunEventSchema.parse(rest));
}

export function eventExpiry(nowMs: number, retentionDays: number): number {
  return epochSeconds(nowMs) + retentionDays * 86_400;
}
