import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import * as z from "zod";
import { epochSeconds, keys, prefixes } from "./keys";
import { isExpired, type Db } from "./dynamo";
import { queryItems } from "./query-pages";
import { SCOPES, type Caller } from "../core/access";
import { EVENT_SURFACES, type EventSurface } from "../protocol/surface";

/** Who the connection acts as: from the $connect authorizer, or from the key of an in-band `connect`. */
export const CallerSchema = z.lazy(() => z.object({
  tenantId: z.string(),
  keyId: z.string(),
  keyName: z.string(),
  scopes: z.array(z.enum(SCOPES)),
  models: z.array(z.string()).optional(),
  rateLimitPerMinute: z.number().optional(),
}));

/** API Gateway closes WebSockets after 2 hours; records outlive that a little. */
const CONNECTION_TTL_SECONDS = 3 * 3600;

export const ConnectionRecordSchema = z.lazy(() => z.object({
  v: z.literal(1),
  connectionId: z.string(),
  connectedAt: z.number(),
  authenticated: z.boolean(),
  /** Sessions this connection ever subscribed to, for the cleanup at $disconnect (records before `subscribedTo`). */
  sessionKeys: z.array(z.string()).default([]),
  /** Sessions this connection ever subscribed to (a string set): what $disconnect cleans up. */
  subscribedTo: stringSet().optional(),
  /**
   * Sessions it follows now with a session-wide subscription (a string set,
   * added after the subscription item landed, removed before an
   * unsubscribe): a request on one of them needs no subscribe (isFollowing).
   */
  following: stringSet().optional(),
  /** The `connect.challenge` nonce sent to this connection. */
  nonce: z.string().optional(),
  /** From `connect`: client capabilities (e.g. `frame-chunks`), granted scopes, who the client says it is. */
  caps: z.array(z.string()).optional(),
  scopes: z.array(z.string()).optional(),
  clientId: z.string().optional(),
  /** From `connect` (caps, client mode): which view of streamed text it gets (absent: both). */
  surface: z.enum(EVENT_SURFACES).optional(),
  caller: CallerSchema.optional(),
  /** In-band `connect` attempts refused so far (the 5th closes the socket). */
  failedConnects: z.number().optional(),
  expiresAt: z.number(),
}));
export type ConnectionRecord = z.infer<typeof ConnectionRecordSchema>;

/** A DynamoDB string set (the document client reads it back as a JS Set), as a list. */
function stringSet() {
  return z.preprocess((value) => (value instanceof Set ? [...value] : value), z.array(z.string()));
}

/**
 * Whether a request of this connection on `sessionKey` can skip subscribing
 * (3 writes): it follows the session already, and its subscription cannot
 * have expired (it was written while this connection lived, and lives
 * CONNECTION_TTL_SECONDS; API Gateway closes a connection after 2 hours).
 */
export function isFollowing(connection: ConnectionRecord | undefined, sessionKey: string, nowMs: number): boolean {
  if (!connection?.following?.includes(sessionKey)) return false;
  return nowMs - connection.connectedAt < FOLLOW_TRUSTED_MS;
}

/** A subscription made at any point of a connection this young has at least half an hour left. */
const FOLLOW_TRUSTED_MS = (CONNECTION_TTL_SECONDS - 1800) * 1000;

/** A connection whose $connect carried a valid key is authenticated from the start (`caller`). */
export async function putConnection(db: Db, connectionId: string, nonce?: string, caller?: Caller): Promise<void> {
  const now = db.now();
  const record: ConnectionRecord = {
    v: 1,
    connectionId,
    connectedAt: now,
    authenticated: caller !== undefined,
    ...(caller ? { caller, scopes: caller.scopes } : {}),
    sessionKeys: [],
    ...(nonce ? { nonce } : {}),
    expiresAt: epochSeconds(now) + CONNECTION_TTL_SECONDS,
  };
  await db.doc.send(new PutCommand({ TableName: db.table, Item: { ...keys.connection(connectionId), ...record } }));
}

export async function getConnection(db: Db, connectionId: string): Promise<ConnectionRecord | undefined> {
  const out = await db.doc.send(
    new GetCommand({ TableName: db.table, Key: keys.connection(connectionId), ConsistentRead: true }),
  );
  if (!out.Item || isExpired(out.Item as { expiresAt?: number }, db.now())) return undefined;
  const { pk: _pk, sk: _sk, ...rest } = out.Item;
  return ConnectionRecordSchema.parse(rest);
}

export interface ConnectGrant {
  caps: string[];
  scopes: string[];
  clientId?: string;
  caller?: Caller;
  surface?: EventSurface;
}

export async function markAuthenticated(db: Db, connectionId: string, grant: ConnectGrant = { caps: [], scopes: [] }): Promise<void> {
  await db.doc.send(
    new UpdateCommand({
      TableName: db.table,
      Key: keys.connection(connectionId),
      UpdateExpression: `SET authenticated = :yes, caps = :caps, scopes = :scopes, surface = :surface${grant.clientId ? ", clientId = :client" : ""}${grant.caller ? ", #caller = :caller" : ""}`,
      ConditionExpression: "attribute_exists(pk)",
      ...(grant.caller ? { ExpressionAttributeNames: { "#caller": "caller" } } : {}),
      ExpressionAttributeValues: { ":yes": true, ":caps": grant.caps, ":scopes": grant.scopes, ":surface": grant.surface ?? "both", ...(grant.clientId ? { ":client": grant.clientId } : {}), ...(grant.caller ? { ":caller": grant.caller } : {}) },
    }),
  );
}

/** Counts a refused in-band `connect`; answers the count so far. */
export async function countFailedConnect(db: Db, connectionId: string): Promise<number> {
  const out = await db.doc.send(
    new UpdateCommand({
      TableName: db.table,
      Key: keys.connection(connectionId),
      UpdateExpression: "ADD failedConnects :one",
      ConditionExpression: "attribute_exists(pk)",
      ExpressionAttributeValues: { ":one": 1 },
      ReturnValues: "UPDATED_NEW",
    }),
  ).catch((error: unknown) => {
    if ((error as { name?: string }).name === "ConditionalCheckFailedException") return { Attributes: { failedConnects: 0 } };
    throw error;
  });
  return Number(out.Attributes?.failedConnects ?? 0);
}

/**
 * Subscribes the connection to the session's live events; `runId` narrows it
 * to one run (events.replay: until that run ends). The subscription item is
 * written before the caller acknowledges: an emitter reads the subscriber
 * list (one consistent Query) after it logs an event and before it fans it
 * out, so any event logged after the subscription landed reaches the new
 * subscriber live, and any logged before is in its replay (docs/protocol.md,
 * "Resuming a stream").
 */
export async function subscribe(db: Db, connectionId: string, sessionKey: string, opts: { runId?: string; surface?: EventSurface } = {}): Promise<void> {
  const now = db.now();
  await db.doc.send(
    new PutCommand({
      TableName: db.table,
      Item: {
        ...keys.subscription(sessionKey, connectionId),
        v: 1,
        connectionId,
        sessionKey,
        ...(opts.runId ? { runId: opts.runId } : {}),
        // The connection's surface travels with the subscription: the emitter reads no connection record.
        ...(opts.surface && opts.surface !== "both" ? { surface: opts.surface } : {}),
        subscribedAt: now,
        expiresAt: epochSeconds(now) + CONNECTION_TTL_SECONDS,
      },
    }),
  );
  // Last: `following` only ever names a session-wide subscription that exists.
  // A run-scoped one (events.replay) replaced the session-wide item, so the session is no longer followed.
  await updateConnectionSets(db, connectionId, opts.runId ? "ADD subscribedTo :key DELETE following :key" : "ADD subscribedTo :key, following :key", sessionKey);
}

export async function unsubscribe(db: Db, connectionId: string, sessionKey: string, opts: { connectionGoing?: boolean } = {}): Promise<void> {
  // First: from here on a request of this connection subscribes again (nothing to do for a connection being removed).
  if (!opts.connectionGoing) await updateConnectionSets(db, connectionId, "DELETE following :key", sessionKey);
  await db.doc.send(new DeleteCommand({ TableName: db.table, Key: keys.subscription(sessionKey, connectionId) }));
}

async function updateConnectionSets(db: Db, connectionId: string, expression: string, sessionKey: string): Promise<void> {
  await db.doc.send(
    new UpdateCommand({
      TableName: db.table,
      Key: keys.connection(connectionId),
      UpdateExpression: expression,
      ConditionExpression: "attribute_exists(pk)",
      ExpressionAttributeValues: { ":key": new Set([sessionKey]) },
    }),
  ).catch((error: unknown) => {
    // The connection is gone: the subscription item is the source of truth, its TTL ends it.
    if ((error as { name?: string }).name !== "ConditionalCheckFailedException") throw error;
  });
}

/** Connections subscribed to the session (those narrowed to another run left out when `runId` is given). */
export async function subscribers(db: Db, sessionKey: string, runId?: string): Promise<string[]> {
  return (await subscriberTargets(db, sessionKey, runId)).map((target) => target.connectionId);
}

export interface SubscriberTarget {
  connectionId: string;
  surface: EventSurface;
}

/** `subscribers` with each connection's surface (what the emitter fans out to). */
export async function subscriberTargets(db: Db, sessionKey: string, runId?: string): Promise<SubscriberTarget[]> {
  const items = await queryItems(db, {
    KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
    ExpressionAttributeValues: { ":pk": keys.subscription(sessionKey, "").pk, ":prefix": prefixes.subscription },
    // A subscription acknowledged a moment ago must be in the list.
    ConsistentRead: true,
  });
  return items
    .filter((item) => !isExpired(item as { expiresAt?: number }, db.now()))
    .filter((item) => runId === undefined || item.runId === undefined || item.runId === runId)
    .map((item) => ({ connectionId: item.connectionId as string, surface: surfaceOf(item.surface) }));
}

function surfaceOf(value: unknown): EventSurface {
  return (EVENT_SURFACES as readonly unknown[]).includes(value) ? (value as EventSurface) : "both";
}

/** Removes the connection and all its subscriptions ($disconnect, or GoneException on send). */
export async function removeConnection(db: Db, connectionId: string): Promise<void> {
  const record = await getConnection(db, connectionId);
  const sessionKeys = new Set([...(record?.sessionKeys ?? []), ...(record?.subscribedTo ?? [])]);
  for (const sessionKey of sessionKeys) await unsubscribe(db, connectionId, sessionKey, { connectionGoing: true });
  await db.doc.send(new DeleteCommand({ TableName: db.table, Key: keys.connection(connectionId) }));
}
