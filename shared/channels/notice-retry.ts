import { DeleteCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import * as z from "zod";
import { conditionally, type Db } from "../aws/dynamo";
import { keys, prefixes } from "../aws/keys";
import { queryItems } from "../aws/query-pages";
import { getRun, RunResultSchema } from "../aws/runs";
import { ChannelTargetSchema } from "../core/channel-target";
import { deliverChannelReply, type DeliverableRun, type DeliverDeps } from "./deliver";
import { closeLedger } from "./ledger";
import { DEFAULT_RETRY } from "./platform-call";

/**
 * Chat notices and final replies retried outside the request that first
 * tried them. A notice sent inside a
 * webhook request (a message refused or dropped by the intake of a newer one)
 * is tried once there, so the platform's 200 never waits for a backoff. When
 * that one try fails retryably (5xx, 429, timeout) its ledger part stays
 * `failed` and retryable (shared/channels/deliver.ts) and the notice is
 * registered here (item CHNOTICES / N#<ledger id>, v1, holding what delivery
 * needs: a refused message has no run record to read it from).
 *
 * The sweeper (every minute) tries each due notice again through the same
 * delivery as a run's final reply, with its backoff (DEFAULT_RETRY), and the
 * ledger's conditional reclaim (failed -> sending) keeps it exactly once
 * whoever retries at the same time (two sweeps, a redelivered webhook).
 * Between sweeps the entry backs off too (1, 2, 4 ... minutes, at most 30),
 * and is given up after NOTICE_RETRY.maxTries tries.
 */
export const NOTICE_RETRY = { maxTries: 8, baseDelayMs: 60_000, maxDelayMs: 30 * 60_000, perSweep: 10 };

const PendingNoticeSchema = z.lazy(() => z.object({
  v: z.literal(1),
  notice: z.object({
    runId: z.string(),
    sessionKey: z.string(),
    // Every terminal status: a run's final reply (ok included) is registered too (deliverReplyOrRegister).
    status: z.enum(["ok", "error", "timeout", "aborted"]),
    channelTarget: ChannelTargetSchema,
    result: RunResultSchema,
  }),
  tries: z.number().int().nonnegative(),
  nextAt: z.number(),
  registeredAt: z.number(),
}));
type PendingNotice = z.infer<typeof PendingNoticeSchema>;

export type NoticeStatus = PendingNotice["notice"]["status"];

/**
 * A run's final reply through the normal delivery; when a send still failed
 * retryably after delivery's own backoff (the platform down for longer than
 * that), the reply is registered for the sweeper's retries instead of waiting
 * for a finalize that may never repeat. `known`: the ended record, if the
 * caller has it.
 */
export async function deliverReplyOrRegister(deps: DeliverDeps, runId: string, known?: DeliverableRun): Promise<void> {
  if ((await deliverChannelReply(deps, runId, known)) === "settled") return;
  const run = known ?? (await getRun(deps.db, runId));
  if (run && isNoticeStatus(run.status)) await registerPendingNotice(deps.db, { ...run, status: run.status });
}

function isNoticeStatus(status: string): status is NoticeStatus {
  return (PendingNoticeSchema.unwrap().shape.notice.shape.status.options as readonly string[]).includes(status);
}

/** Registers a notice whose send failed retryably; a second registration (a redelivery that failed too) keeps the first. */
export async function registerPendingNotice(db: Db, notice: DeliverableRun & { status: NoticeStatus }): Promise<void> {
  const now = db.now();
  const item: PendingNotice = PendingNoticeSchema.parse({
    v: 1,
    notice: { runId: notice.runId, sessionKey: notice.sessionKey, status: notice.status, channelTarget: notice.channelTarget, result: notice.result },
    tries: 0,
    nextAt: now,
    registeredAt: now,
  });
  await conditionally(() =>
    db.doc.send(new PutCommand({ TableName: db.table, Item: { ...keys.pendingNotice(notice.runId), ...item }, ConditionExpression: "attribute_not_exists(pk)" })),
  );
}

async function dueNotices(db: Db, limit: number): Promise<PendingNotice[]> {
  const items = await queryItems(db, {
    KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
    FilterExpression: "nextAt <= :now",
    ExpressionAttributeValues: { ":pk": keys.pendingNotice("").pk, ":prefix": prefixes.pendingNotice, ":now": db.now() },
    ConsistentRead: true,
  }, limit);
  return items.map(({ pk: _pk, sk: _sk, ...rest }) => PendingNoticeSchema.parse(rest));
}

export interface NoticeRetryReport {
  delivered: string[];
  waiting: string[];
  gaveUp: string[];
}

/** One sweep's retries of the due notices (sequential: they are rare, and each may back off for seconds). */
export async function retryPendingNotices(deps: DeliverDeps, outOfTime: () => boolean = () => false): Promise<NoticeRetryReport> {
  const report: NoticeRetryReport = { delivered: [], waiting: [], gaveUp: [] };
  for (const pending of await dueNotices(deps.db, NOTICE_RETRY.perSweep)) {
    if (outOfTime()) break;
    const id = pending.notice.runId;
    const outcome = await deliverChannelReply({ ...deps, retry: deps.retry ?? DEFAULT_RETRY }, id, pending.notice);
    const tries = pending.tries + 1;
    if (outcome === "settled") {
      await forget(deps.db, id);
      report.delivered.push(id);
    } else if (tries >= NOTICE_RETRY.maxTries) {
      deps.log.error("channel notice given up", { id, tries });
      await closeLedger(deps.db, id, "failed");
      await forget(deps.db, id);
      report.gaveUp.push(id);
    } else {
      await later(deps.db, id, tries);
      report.waiting.push(id);
    }
  }
  return report;
}

async function later(db: Db, id: string, tries: number): Promise<void> {
  const delay = Math.min(NOTICE_RETRY.maxDelayMs, NOTICE_RETRY.baseDelayMs * 2 ** (tries - 1));
  // Conditional: a concurrent sweep that settled the notice has removed the entry; never leave half an item.
  await conditionally(() =>
    db.doc.send(
      new UpdateCommand({
        TableName: db.table,
        Key: keys.pendingNotice(id),
        UpdateExpression: "SET tries = :tries, nextAt = :next",
        ConditionExpression: "attribute_exists(pk)",
        ExpressionAttributeValues: { ":tries": tries, ":next": db.now() + delay },
      }),
    ),
  );
}

async function forget(db: Db, id: string): Promise<void> {
  await db.doc.send(new DeleteCommand({ TableName: db.table, Key: keys.pendingNotice(id) }));
}
