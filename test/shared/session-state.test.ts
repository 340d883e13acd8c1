import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { markProfileFailure, markProfileGood, readProfileHealth } from "../../shared/aws/auth-profiles";
import { getSession, resetSession, resolveSession } from "../../shared/aws/sessions";
import { isCoolingDown } from "../../shared/core/auth-cooldown";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { documentClient } from "../../shared/aws/document-client";
import type { Db } from "../../shared/aws/dynamo";
import { AgentConfigSchema } from "../../shared/config/config";
import { acceptRun } from "../../shared/intake/intake";
import { startTestDb, type TestDb } from "../support/local-db";

let t: TestDb;
beforeAll(async () => {
  t = await startTestDb();
});
afterAll(async () => t.close());

describe("sessions (dynalite)", () => {
  it("concurrent first messages for one key never mint two sessions", async () => {
    const resolved = await Promise.all(Array.from({ length: 10 }, () => resolveSession(t.db, "first-key")));
    expect(new Set(resolved.map((s) => s.sessionId)).size).toBe(1);
    expect((await getSession(t.db, "first-key"))?.sessionId).toBe(resolved[0].sessionId);
  });

  it("a /new-style reset points the key at a new session id and remembers the old one; repeating it is harmless", async () => {
    const original = await resolveSession(t.db, "reset-key");
    const after = await resetSession(t.db, "reset-key", original.sessionId, "ses_new1");
    expect(after).toMatchObject({ sessionId: "ses_new1", previousSessionIds: [original.sessionId] });
    expect(after.resetAt).toBeTypeOf("number");
    const repeated = await resetSession(t.db, "reset-key", original.sessionId, "ses_new1");
    expect(repeated).toMatchObject({ sessionId: "ses_new1", previousSessionIds: [original.sessionId] });
  });

  it("two racing resets of the same session: exactly one wins", async () => {
    const original = await resolveSession(t.db, "race-reset");
    const [a, b] = await Promise.all([
      resetSession(t.db, "race-reset", original.sessionId, "ses_a"),
      resetSession(t.db, "race-reset", original.sessionId, "ses_b"),
    ]);
    const final = await getSession(t.db, "race-reset");
    expect(["ses_a", "ses_b"]).toContain(final?.sessionId);
    expect(final?.previousSessionIds).toEqual([original.sessionId]);
    expect(a.sessionId).toBe(final?.sessionId);
    expect(b.sessionId).toBe(final?.sessionId);
  });
});

describe("auth-profile health (dynalite)", () => {
  it("records cooldowns every run sees, and a success clears the streak", async () => {
    await markProfileFailure(t.db, "openai", "key-a", "rate_limit", "openai/gpt-x");
    await markProfileFailure(t.db, "openai", "key-b", "billing", "openai/gpt-x");
    const health = await readProfileHealth(t.db, "openai");
    const now = t.db.now();
    expect(isCoolingDown(health.get("key-a"), "openai/gpt-x", now)).toBe(true);
    expect(isCoolingDown(health.get("key-a"), "openai/other", now)).toBe(false);
    expect(health.get("key-b")).toMatchObject({ disabledReason: "billing" });
    expect(health.get("key-c")).toBeUndefined();
    await markProfileGood(t.db, "openai", "key-a", health.get("key-a"));
    expect((await readProfileHealth(t.db, "openai")).get("key-a")).toMatchObject({ errorCount: 0 });
  });

  it("does not lose failures recorded concurrently", async () => {
    await Promise.all(Array.from({ length: 5 }, () => markProfileFailure(t.db, "anthropic", "k", "overloaded", "anthropic/c")));
    expect((await readProfileHealth(t.db, "anthropic")).get("k")?.errorCount).toBe(5);
  });
});

describe("intake idempotency across processes (dynalite)", () => {
  /** Another Lambda instance: its own SDK clients against the same table. */
  function otherProcess(): Db {
    const client = new DynamoDBClient({ region: "us-east-1", endpoint: t.dynamo.endpoint, credentials: { accessKeyId: "local", secretAccessKey: "local" } });
    return { doc: documentClient(client, { removeUndefinedValues: true }), table: t.db.table, now: t.db.now };
  }

  it("the same idempotency key, sent to two instances at once, returns the original run from both", async () => {
    const sent: string[] = [];
    const config = AgentConfigSchema.parse({});
    const queue = { send: async ({ runId }: { runId: string }) => void sent.push(runId) };
    const request = { sessionKey: "idem-key", message: "hello", idempotencyKey: "client-42" };
    const [a, b] = await Promise.all([
      acceptRun({ db: t.db, queue, config }, request, "rest"),
      acceptRun({ db: otherProcess(), queue, config }, request, "rest"),
    ]);
    expect(a.runId).toBe(b.runId);
    expect([a.duplicate, b.duplicate].sort()).toEqual([false, true]);
    // Later, from a third instance: still the original run, nothing new queued beyond the pointer (FIFO dedups by run id).
    const again = await acceptRun({ db: otherProcess(), queue, config }, request, "rest");
    expect(again).toMatchObject({ runId: a.runId, duplicate: true, acceptedAt: a.acceptedAt });
    expect(new Set(sent)).toEqual(new Set([a.runId]));
  });
});
