import { GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import { sha256Hex } from "../core/ids";
import type { Db } from "./dynamo";
import { keys } from "./keys";

/**
 * API keys in the table, stored by the SHA-256 of the key, never the key.
 * The local deploy stores `npm start`'s dev token here (the local tenant's
 * admin key), so any assembly deployed locally answers to it; in AWS,
 * operators add keys the same way. Lookups are cached per container for
 * AUTH_CACHE_MS (an authorizer's result cache), so a revoked key stops
 * working within that time.
 */
export const AUTH_CACHE_MS = 300_000;

export interface ApiKeyRecord {
  v: 1;
  tenantId: string;
  name: string;
  scopes: string[];
  createdAt: number;
  revokedAt?: number;
}

export async function putApiKey(db: Db, key: string, record: Omit<ApiKeyRecord, "v" | "createdAt">): Promise<void> {
  await db.doc.send(new PutCommand({ TableName: db.table, Item: { ...keys.apiKey(sha256Hex(key)), v: 1, ...record, createdAt: db.now() } }));
}

const cache = new Map<string, { record: ApiKeyRecord | undefined; until: number }>();

export async function findApiKey(db: Db, key: string): Promise<ApiKeyRecord | undefined> {
  const digest = sha256Hex(key);
  const hit = cache.get(digest);
  if (hit && hit.until > db.now()) return hit.record;
  const out = await db.doc.send(new GetCommand({ TableName: db.table, Key: keys.apiKey(digest) }));
  const item = out.Item as (ApiKeyRecord & { pk: string }) | undefined;
  const record = item && !item.revokedAt ? item : undefined;
  cache.set(digest, { record, until: db.now() + AUTH_CACHE_MS });
  return record;
}
