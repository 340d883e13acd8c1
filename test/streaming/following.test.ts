import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LocalStack } from "../../infra/local/stack";
import { getConnection, isFollowing, putConnection, removeConnection, subscribe, subscribers, unsubscribe } from "../../shared/aws/connections";
import { keys } from "../../shared/aws/keys";
import type { Frame } from "../../shared/client/gateway-client";
import { chat, FakeOpenAIServer } from "../support/fake-openai-server";
import { startStackWithFakeOpenAI, stopStackWithFakeOpenAI } from "../support/fake-openai-stack";
import { startTestDb, type TestDb } from "../support/local-db";
import { TestWsClient } from "../support/ws-client";

/**
 * A connection that follows a session already (its session-wide subscription
 * exists) sends its next message there without subscribing again: two writes
 * fewer per message of a conversation (issue 15). The
 * connection's `following` set only ever names such a subscription.
 */
describe("the connection's following set", () => {
  let t: TestDb;
  beforeAll(async () => {
    t = await startTestDb();
  });
  afterAll(async () => t?.close());

  it("names a session after a session-wide subscribe, not after a run-scoped one, not after an unsubscribe", async () => {
    await putConnection(t.db, "fol-1");
    await subscribe(t.db, "fol-1", "s-a");
    expect(isFollowing(await getConnection(t.db, "fol-1"), "s-a", t.db.now())).toBe(true);
    expect(isFollowing(await getConnection(t.db, "fol-1"), "s-b", t.db.now())).toBe(false);
    // events.replay's live subscription narrows the item to one run: the session is no longer followed.
    await subscribe(t.db, "fol-1", "s-a", { runId: "run-x" });
    expect(isFollowing(await getConnection(t.db, "fol-1"), "s-a", t.db.now())).toBe(false);
    await subscribe(t.db, "fol-1", "s-a");
    await unsubscribe(t.db, "fol-1", "s-a");
    expect(isFollowing(await getConnection(t.db, "fol-1"), "s-a", t.db.now())).toBe(false);
    expect(await subscribers(t.db, "s-a")).toEqual([]);
  });

  it("is not trusted on a connection older than its subscriptions' lifetime allows", async () => {
    await putConnection(t.db, "fol-2");
    await subscribe(t.db, "fol-2", "s-c");
    const record = await getConnection(t.db, "fol-2");
    expect(isFollowing(record, "s-c", record!.connectedAt + 2.4 * 3600_000)).toBe(true);
    expect(isFollowing(record, "s-c", record!.connectedAt + 2.6 * 3600_000)).toBe(false);
  });

  it("$disconnect removes every subscription it ever made, old list and new set alike", async () => {
    await putConnection(t.db, "fol-3");
    await subscribe(t.db, "fol-3", "s-d");
    await subscribe(t.db, "fol-3", "s-e", { runId: "run-y" });
    expect(await subscribers(t.db, "s-d")).toEqual(["fol-3"]);
    await removeConnection(t.db, "fol-3");
    expect(await subscribers(t.db, "s-d")).toEqual([]);
    expect(await subscribers(t.db, "s-e")).toEqual([]);
    expect(await getConnection(t.db, "fol-3")).toBeUndefined();
  });
});

describe("a conversation on one connection (local stack)", () => {
  let stack: LocalStack;
  let oai: FakeOpenAIServer;
  beforeAll(async () => {
    ({ stack, oai } = await startStackWithFakeOpenAI());
  });
  afterAll(async () => stopStackWithFakeOpenAI({ stack, oai }));

  const subscribedAt = async (sessionKey: string, connectionId: string) =>
    (await stack.deps.db.doc.send(new GetCommand({ TableName: stack.deps.db.table, Key: keys.subscription(sessionKey, connectionId), ConsistentRead: true }))).Item?.subscribedAt as number | undefined;
  const endOf = (runId: string) => (f: Frame) => f.type === "event" && f.event === "agent" && f.payload?.runId === runId && f.payload?.stream === "lifecycle" && f.payload?.data?.phase === "end";

  it("the second message streams to the client without a second subscription write; after an unsubscribe it subscribes again", async () => {
    const client = await TestWsClient.open(stack.webSocketUrl);
    try {
      await client.request("connect", { auth: { token: stack.authToken } });
      oai.enqueue(chat.text("first answer"), chat.text("second answer"), chat.text("third answer"));
      const first = await client.request("agent", { sessionKey: "follow-1", message: "one", idempotencyKey: "fol-e2e-1" });
      await client.waitFor(endOf(first.payload.runId as string));
      const [connectionId] = await subscribers(stack.deps.db, "follow-1");
      const before = await subscribedAt("follow-1", connectionId!);
      expect(before).toBeGreaterThan(0);

      const second = await client.request("agent", { sessionKey: "follow-1", message: "two", idempotencyKey: "fol-e2e-2" });
      const end = await client.waitFor(endOf(second.payload.runId as string));
      expect(end.payload.data.payloads).toEqual([{ text: "second answer" }]);
      // Not written again: the subscription of the first message served the second.
      expect(await subscribedAt("follow-1", connectionId!)).toBe(before);

      await client.request("sessions.unsubscribe", { key: "follow-1" });
      const third = await client.request("agent", { sessionKey: "follow-1", message: "three", idempotencyKey: "fol-e2e-3" });
      await client.waitFor(endOf(third.payload.runId as string));
      expect(await subscribers(stack.deps.db, "follow-1")).toEqual([connectionId]);
    } finally {
      await client.close();
    }
  });
});
