import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GetCommand, PutCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { startLocalStack, type LocalStack } from "../../infra/local/stack";
import { createApiKey } from "../../shared/aws/api-keys";
import { epochSeconds, keys } from "../../shared/aws/keys";
import { runIdForIdempotencyKey } from "../../shared/core/ids";
import { tenantIdempotencyKey } from "../../shared/tenancy/guard";
import { loadAgentConfig } from "../../shared/config/config";
import { TestWsClient } from "../support/ws-client";

/**
 * The per-key rate limit on the WebSocket `agent` method, through the
 * template-deployed local stack. `agent` reads its admission (run, lane,
 * session) while the limit's counter is written, to answer a round trip
 * sooner; over the limit it answers RATE_LIMITED, ahead of any other error
 * of the frame, and leaves nothing behind: no run record, no lane entry, no
 * session, no subscription. The counters of this minute and the next two
 * are set over the limit first, so a minute boundary during the test
 * changes nothing.
 */
let stack: LocalStack;
let limitedKey: string;
let limitedKeyId: string;
let freeKey: string;

beforeAll(async () => {
  stack = await startLocalStack({ config: loadAgentConfig({}) });
  const limited = await createApiKey(stack.deps.db, { tenantId: "acme", name: "limited", scopes: ["operator.admin"], rateLimitPerMinute: 5 });
  limitedKey = limited.key;
  limitedKeyId = limited.record.keyId!;
  freeKey = (await createApiKey(stack.deps.db, { tenantId: "acme", name: "free", scopes: ["operator.admin"] })).key;
}, 400_000);
afterAll(async () => stack?.close());

async function exhaust(keyId: string): Promise<void> {
  const minute = Math.floor(Date.now() / 60_000);
  for (const m of [minute, minute + 1, minute + 2]) {
    await stack.deps.db.doc.send(new PutCommand({ TableName: stack.deps.db.table, Item: { ...keys.rateWindow(keyId, m), requests: 1_000_000, expiresAt: epochSeconds((m + 2) * 60_000) } }));
  }
}

async function itemsOf(pk: string) {
  return (await stack.deps.db.doc.send(new QueryCommand({ TableName: stack.deps.db.table, KeyConditionExpression: "pk = :pk", ExpressionAttributeValues: { ":pk": pk }, ConsistentRead: true }))).Items ?? [];
}

describe("the WebSocket agent method over a key's rate limit", () => {
  it("answers RATE_LIMITED, also for a frame that is invalid besides, and writes nothing for the message", async () => {
    const client = await TestWsClient.open(stack.webSocketUrl, { headers: { authorization: `Bearer ${limitedKey}` } });
    try {
      expect(await client.request("connect", {})).toMatchObject({ ok: true });
      await exhaust(limitedKeyId);
      const refused = await client.request("agent", { sessionKey: "limited-session", message: "hello", idempotencyKey: "limited-1" });
      expect(refused).toMatchObject({ ok: false, error: { code: "RATE_LIMITED", details: { limitPerMinute: 5, retryAfterMs: expect.any(Number) } } });
      const invalid = await client.request("agent", { sessionKey: "limited-session" });
      expect(invalid).toMatchObject({ ok: false, error: { code: "RATE_LIMITED" } });

      const runId = runIdForIdempotencyKey(tenantIdempotencyKey({ tenantId: "acme", keyId: limitedKeyId, keyName: "limited", scopes: ["operator.admin"] }, "limited-1"));
      const db = stack.deps.db;
      expect((await db.doc.send(new GetCommand({ TableName: db.table, Key: keys.run(runId), ConsistentRead: true }))).Item).toBeUndefined();
      expect(await itemsOf("SESSION#limited-session")).toEqual([]);
      expect(await itemsOf("LANE#limited-session")).toEqual([]);
      expect(await itemsOf("SUBS#limited-session")).toEqual([]);
    } finally {
      await client.close();
    }
  });

  it("leaves another key's requests alone: the same message from a key under its limit is accepted", async () => {
    const client = await TestWsClient.open(stack.webSocketUrl, { headers: { authorization: `Bearer ${freeKey}` } });
    try {
      expect(await client.request("connect", {})).toMatchObject({ ok: true });
      const accepted = await client.request("agent", { sessionKey: "free-session", message: "hello", idempotencyKey: "free-1" });
      expect(accepted).toMatchObject({ ok: true, payload: { status: "accepted", runId: expect.any(String) } });
      expect(await client.request("agent", { sessionKey: "free-session" })).toMatchObject({ ok: false, error: { code: "INVALID_REQUEST" } });
    } finally {
      await client.close();
    }
  }, 120_000);
});
