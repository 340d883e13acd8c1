import { randomBytes } from "node:crypto";
import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
// zod's mini build: the authorizer parses only this record, and classic zod would be a quarter of its
// import (issue 15). English messages as classic zod registers them (the same locale, so no change
// where both load); mini registers none.
import * as z from "zod/mini";
import en from "zod/v4/locales/en.js";
import { SCOPES, type Caller } from "../core/access";
import { BoundedTtlCache } from "../core/bounded-ttl-cache";
import { sha256Hex } from "../core/ids";
import type { Db } from "./dynamo";
import { keys } from "./keys";

/**
 * API keys in the table, stored by the SHA-256 of the key, never the key:
 *   APIKEY#<sha256>  APIKEY   what the authorizer reads (one GetItem)
 *   APIKEY#INDEX     K#<id>   the listing (`npm run keys -- list`, no Scan)
 * The local deploy stores `npm start`'s dev token here (the local tenant's
 * admin key). Lookups are cached per container for AUTH_CACHE_MS (like the
 * authorizer's result cache), so a revoked key stops working within that time.
 */
export const AUTH_CACHE_MS = 300_000;

z.config(en());

export const ApiKeyRecordSchema = z.object({
  v: z.literal(1),
  tenantId: z.string(),
  name: z.string(),
  scopes: z.array(z.enum(SCOPES)),
  createdAt: z.number(),
  revokedAt: z.optional(z.number()),
  /** Short public id (`key_` + 16 hex of the digest): what `list` shows and `revoke` takes. */
  keyId: z.optional(z.string()),
  /** Models this key may run; absent = any. */
  models: z.optional(z.array(z.string())),
  rateLimitPerMinute: z.optional(z.int().check(z.positive())),
});
export type ApiKeyRecord = z.infer<typeof ApiKeyRecordSchema>;

export type NewApiKey = Pick<ApiKeyRecord, "tenantId" | "name" | "scopes" | "models" | "rateLimitPerMinute">;

export function keyIdOf(key: string): string {
  return `key_${sha256Hex(key).slice(0, 16)}`;
}

/** A fresh key: `ark_` + 32 random bytes (base64url). Shown once; only its digest is stored. */
export function generateApiKey(): string {
  return `ark_${randomBytes(32).toString("base64url")}`;
}

export async function putApiKey(db: Db, key: string, input: NewApiKey): Promise<ApiKeyRecord> {
  const digest = sha256Hex(key);
  const record: ApiKeyRecord = { v: 1, ...dropUndefined(input), keyId: keyIdOf(key), createdAt: db.now() };
  await db.doc.send(new PutCommand({ TableName: db.table, Item: { ...keys.apiKey(digest), ...record } }));
  await db.doc.send(new PutCommand({ TableName: db.table, Item: { ...keys.apiKeyIndex(record.keyId!), ...record, digest } }));
  return record;
}

export async function createApiKey(db: Db, input: NewApiKey): Promise<{ key: string; record: ApiKeyRecord }> {
  const key = generateApiKey();
  return { key, record: await putApiKey(db, key, input) };
}

export async function listApiKeys(db: Db): Promise<ApiKeyRecord[]> {
  const records: ApiKeyRecord[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await db.doc.send(new QueryCommand({ TableName: db.table, KeyConditionExpression: "pk = :pk", ExpressionAttributeValues: { ":pk": keys.apiKeyIndex("").pk }, ExclusiveStartKey: start }));
    for (const item of out.Items ?? []) records.push(parseRecord(item)!);
    start = out.LastEvaluatedKey;
  } while (start);
  return records;
}

/** False when no key has this id. Both items get `revokedAt`; the authorizer refuses it once its cache entry ages out. */
export async function revokeApiKey(db: Db, keyId: string): Promise<boolean> {
  const out = await db.doc.send(new GetCommand({ TableName: db.table, Key: keys.apiKeyIndex(keyId), ConsistentRead: true }));
  if (!out.Item) return false;
  const now = db.now();
  for (const key of [keys.apiKeyIndex(keyId), keys.apiKey(String(out.Item.digest))]) {
    await db.doc.send(new UpdateCommand({ TableName: db.table, Key: key, UpdateExpression: "SET revokedAt = if_not_exists(revokedAt, :now)", ExpressionAttributeValues: { ":now": now } }));
  }
  return true;
}

/** Distinct keys (known or not) one container remembers: enough for every real caller, bounded against random tokens. */
export const AUTH_CACHE_MAX_KEYS = 1_000;
const cache = new BoundedTtlCache<string, ApiKeyRecord | undefined>(AUTH_CACHE_MS, AUTH_CACHE_MAX_KEYS);

/** Diagnostics and tests: how many keys this container's lookup cache holds. */
export function apiKeyCacheSize(): number {
  return cache.size;
}

/** The key's live record (undefined when unknown or revoked). */
export async function findApiKey(db: Db, key: string): Promise<ApiKeyRecord | undefined> {
  const digest = sha256Hex(key);
  if (cache.has(digest, db.now())) return cache.get(digest, db.now());
  const out = await db.doc.send(new GetCommand({ TableName: db.table, Key: keys.apiKey(digest) }));
  const item = parseRecord(out.Item);
  const record = item && item.revokedAt === undefined ? { ...item, keyId: item.keyId ?? keyIdOf(key) } : undefined;
  cache.set(digest, record, db.now());
  return record;
}

export function callerOfKey(record: ApiKeyRecord): Caller {
  return {
    tenantId: record.tenantId,
    keyId: record.keyId ?? "key_unknown",
    keyName: record.name,
    scopes: record.scopes,
    ...(record.models ? { models: record.models } : {}),
    ...(record.rateLimitPerMinute ? { rateLimitPerMinute: record.rateLimitPerMinute } : {}),
  };
}

function parseRecord(item: Record<string, unknown> | undefined): ApiKeyRecord | undefined {
  if (!item) return undefined;
  const { pk: _pk, sk: _sk, digest: _d, ...rest } = item;
  return ApiKeyRecordSchema.parse(rest);
}

function dropUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
