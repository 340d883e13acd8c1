import { GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import * as z from "zod";
import { keys, prefixes } from "./keys";
import { conditionally, type Db } from "./dynamo";
import { queryItems } from "./query-pages";
import { newSessionId } from "../core/ids";
import { QueueOverridesSchema } from "../core/queue-settings";

/** Session metadata, schema version 1: the stable key and the transcript it currently points at. */
export const SessionRecordSchema = z.lazy(() => z.object({
  v: z.literal(1),
  sessionKey: z.string(),
  sessionId: z.string(),
  /** The tenant whose key created the session (absent on older sessions: the default tenant). */
  tenantId: z.string().optional(),
  createdAt: z.number(),
  updatedAt: z.number(),
  lastRunId: z.string().optional(),
  /** Set by a `/new`-style reset: when, and the transcripts this key pointed at before (kept, never deleted). */
  resetAt: z.number().optional(),
  previousSessionIds: z.array(z.string()).optional(),
  /** Queue settings stored for the session (a request with `queue.scope: "session"`); per-field fallback to channel and config. */
  queue: QueueOverridesSchema.optional(),
}));
export type SessionRecord = z.infer<typeof SessionRecordSchema>;

export function parseSession(item: Record<string, unknown> | undefined): SessionRecord | undefined {
  if (!item) return undefined;
  const { pk: _pk, sk: _sk, ...rest } = item;
  return SessionRecordSchema.parse(rest);
}

export async function getSession(db: Db, sessionKey: string): Promise<SessionRecord | undefined> {
  const out = await db.doc.send(
    new GetCommand({ TableName: db.table, Key: keys.session(sessionKey), ConsistentRead: true }),
  );
  return parseSession(out.Item);
}

/** A session read this invocation already made (`record` undefined: no session had the key). */
export interface KnownSession {
  record: SessionRecord | undefined;
}

/**
 * sessionKey -> sessionId, race-free: the first writer's conditional put wins and
 * every concurrent first message reads the winner's id back.
 */
export async function resolveSession(db: Db, sessionKey: string, tenantId?: string, known?: KnownSession): Promise<SessionRecord> {
  const { session, indexed } = await resolveSessionIndexing(db, sessionKey, tenantId, known);
  await indexed;
  return session;
}

/**
 * resolveSession, with a new session's index copy (the listing's) written
 * beside the caller's next write instead of before it: the caller awaits
 * `indexed` before it is done (a failure there fails it).
 */
export async function resolveSessionIndexing(
  db: Db,
  sessionKey: string,
  tenantId?: string,
  known?: KnownSession,
  firstRunId?: string,
): Promise<{ session: SessionRecord; indexed: Promise<void>; created: boolean }> {
  // A caller that has just read the session (the tenant check) hands the read on: one GetItem, not two.
  const existing = known ? known.record : await getSession(db, sessionKey);
  if (existing) return { session: existing, indexed: Promise.resolve(), created: false };
  const now = db.now();
  // The run that opens the session is its first `lastRunId`: that run's start has nothing to touch.
  const fresh: SessionRecord = {
    v: 1,
    sessionKey,
    sessionId: newSessionId(),
    ...(tenantId ? { tenantId } : {}),
    createdAt: now,
    updatedAt: now,
    ...(firstRunId ? { lastRunId: firstRunId } : {}),
  };
  const created = await conditionally(() =>
    db.doc.send(
      new PutCommand({
        TableName: db.table,
        Item: { ...keys.session(sessionKey), ...fresh },
        ConditionExpression: "attribute_not_exists(pk)",
      }),
    ),
  );
  if (created) {
    const indexed = putSessionIndex(db, fresh);
    indexed.catch(() => undefined);
    return { session: fresh, indexed, created: true };
  }
  const winner = await getSession(db, sessionKey);
  if (!winner) throw new Error(`session ${sessionKey} vanished while resolving`);
  return { session: winner, indexed: Promise.resolve(), created: false };
}

/**
 * Marks the session active; returns the record as it is now (its current
 * sessionId included) and the write of its index copy, started and not
 * awaited: the caller goes on with its own writes and awaits `indexed`
 * before it is done (a failure there fails it, as before).
 */
export async function touchSession(db: Db, sessionKey: string, runId: string): Promise<{ session: SessionRecord | undefined; indexed: Promise<void> }> {
  const out = await db.doc.send(
    new UpdateCommand({
      TableName: db.table,
      Key: keys.session(sessionKey),
      UpdateExpression: "SET updatedAt = :now, lastRunId = :run",
      ConditionExpression: "attribute_exists(pk)",
      ExpressionAttributeValues: { ":now": db.now(), ":run": runId },
      ReturnValues: "ALL_NEW",
    }),
  );
  const session = parseSession(out.Attributes);
  const indexed = session ? putSessionIndex(db, session) : Promise.resolve();
  indexed.catch(() => undefined);
  return { session, indexed };
}

/**
 * touchSession for a run whose intake created the session with it as
 * `lastRunId` (RunRecord `openedSession`): a read, and no write while the
 * record still names the run; a run of the key that touched it meanwhile
 * (a concurrent first message started ahead of this one) is touched over
 * as before.
 */
export async function touchOpenedSession(db: Db, sessionKey: string, runId: string): Promise<{ session: SessionRecord | undefined; indexed: Promise<void> }> {
  const session = await getSession(db, sessionKey);
  if (session?.lastRunId === runId) return { session, indexed: Promise.resolve() };
  return touchSession(db, sessionKey, runId);
}

/**
 * `/new`: the key starts a new transcript; the old one stays stored under its
 * own id. Race-free and repeatable: the switch is one conditional update that
 * holds when the key still points at `fromSessionId` (or already at `toSessionId`,
 * when a retried step repeats it).
 */
export async function resetSession(db: Db, sessionKey: string, fromSessionId: string, toSessionId: string): Promise<SessionRecord> {
  const now = db.now();
  const switched = await conditionally(() =>
    db.doc.send(
      new UpdateCommand({
        TableName: db.table,
        Key: keys.session(sessionKey),
        UpdateExpression:
          "SET sessionId = :to, resetAt = :now, updatedAt = :now, previousSessionIds = list_append(if_not_exists(previousSessionIds, :none), :from)",
        ConditionExpression: "sessionId = :fromId",
        ExpressionAttributeValues: { ":to": toSessionId, ":now": now, ":none": [], ":from": [fromSessionId], ":fromId": fromSessionId },
      }),
    ),
  );
  const current = await getSession(db, sessionKey);
  if (!current) throw new Error(`session ${sessionKey} vanished while resetting`);
  if (switched) await putSessionIndex(db, current);
  return current;
}

/**
 * The session index: one small item per session under a single partition,
 * rewritten whenever the session is created or starts a run, so
 * `sessions.list` is one Query (no Scan). Derived data: the SESSION item is
 * the source of truth, and a lost index write only delays the listing.
 */
async function putSessionIndex(db: Db, session: SessionRecord): Promise<void> {
  await db.doc.send(new PutCommand({ TableName: db.table, Item: { ...keys.sessionIndex(session.sessionKey), ...session } }));
}

/** Most recently active first; reads at most `scanLimit` index entries. */
export async function listSessions(db: Db, limit = 50, scanLimit = 1000): Promise<SessionRecord[]> {
  const items = await queryItems(
    db,
    {
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
      ExpressionAttributeValues: { ":pk": keys.sessionIndex("").pk, ":prefix": prefixes.sessionIndex },
    },
    scanLimit,
  );
  const found = items.map((item) => parseSession(item)).filter((session): session is SessionRecord => session !== undefined);
  return found.sort((a, b) => b.updatedAt - a.updatedAt).slice(0, limit);
}
