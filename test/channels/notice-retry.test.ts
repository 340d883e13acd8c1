/**
 * The retries of a chat notice whose send failed inside a webhook request
 * (shared/channels/notice-retry.ts), against DynamoDB Local and the fake
 * Telegram Bot API: the failed part stays retryable, a retry sends it once
 * however many retries race, and the pending entry backs off, then is
 * forgotten or given up. A run's final reply that failed past delivery's
 * own backoff is registered and retried the same way.
 */
import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keys } from "../../shared/aws/keys";
import { ChannelsConfigSchema } from "../../shared/config/channels-config";
import { deliverChannelReply, type DeliverableRun } from "../../shared/channels/deliver";
import { readLedger } from "../../shared/channels/ledger";
import { deliverReplyOrRegister, NOTICE_RETRY, registerPendingNotice, retryPendingNotices } from "../../shared/channels/notice-retry";
import { silentLog } from "../../shared/run/deps";
import { FAKE_TELEGRAM_TOKEN, FakeTelegramServer } from "../support/fake-telegram-server";
import { startTestDb, type TestDb } from "../support/local-db";

let testDb: TestDb;
let telegram: FakeTelegramServer;
const once = { attempts: 1, baseDelayMs: 0, maxDelayMs: 0, sleep: async () => undefined };
const SERVER_ERROR = { status: 500, body: { ok: false, error_code: 500, description: "Internal Server Error" } };

beforeAll(async () => {
  [testDb, telegram] = await Promise.all([startTestDb(), FakeTelegramServer.start()]);
});
afterAll(async () => {
  await telegram?.close();
  await testDb?.close();
});

const channels = () => ChannelsConfigSchema.parse({ telegram: { accounts: { main: { botToken: FAKE_TELEGRAM_TOKEN, webhookSecret: "s", apiBaseUrl: telegram.baseUrl } } } });
const deps = () => ({ db: testDb.db, channels: channels(), log: silentLog, retry: once });

function notice(id: string, chatId: string, text: string): DeliverableRun & { status: "error" } {
  return {
    runId: id,
    sessionKey: `agent:main:telegram:direct:${chatId}`,
    status: "error",
    channelTarget: { kind: "telegram", accountId: "main", chatId },
    result: { payloads: [{ text, isError: true }], meta: { reason: "refused" } },
  };
}

const failSendsTo = (chatId: string, ...answers: (typeof SERVER_ERROR)[]) =>
  telegram.scriptWhen((c) => c.path.endsWith("/sendMessage") && c.body.chat_id === chatId, ...answers);
const sendsTo = (chatId: string) => telegram.method("sendMessage").filter((c) => c.body.chat_id === chatId);
const pending = async (id: string) =>
  (await testDb.db.doc.send(new GetCommand({ TableName: testDb.db.table, Key: keys.pendingNotice(id), ConsistentRead: true }))).Item;

describe("a notice whose send failed retryably", () => {
  it("stays failed and retryable with its ledger open; the next delivery sends it once", async () => {
    failSendsTo("801", SERVER_ERROR);
    expect(await deliverChannelReply(deps(), "n_801", notice("n_801", "801", "Busy."))).toBe("retry");
    expect(await readLedger(testDb.db, "n_801")).toMatchObject({ parts: { "0": { state: "failed", retryable: true } } });
    expect((await readLedger(testDb.db, "n_801"))?.done).toBeUndefined();
    // Two retries racing (two sweeps, a sweep and a redelivered webhook): the reclaim lets one send.
    const outcomes = await Promise.all([1, 2, 3].map(() => deliverChannelReply(deps(), "n_801", notice("n_801", "801", "Busy."))));
    expect(outcomes.every((o) => o === "settled")).toBe(true);
    expect(sendsTo("801")).toHaveLength(2);
    expect(telegram.messagesIn("801")).toEqual(["Busy."]);
    expect(await deliverChannelReply(deps(), "n_801", notice("n_801", "801", "Busy."))).toBe("settled");
    expect(sendsTo("801")).toHaveLength(2);
  });

  it("a refusal the platform cannot take (400) is not retried", async () => {
    telegram.scriptWhen((c) => c.path.endsWith("/sendMessage") && c.body.chat_id === "802", { status: 400, body: { ok: false, error_code: 400, description: "Bad Request: chat not found" } });
    expect(await deliverChannelReply(deps(), "n_802", notice("n_802", "802", "Busy."))).toBe("settled");
    expect(await deliverChannelReply(deps(), "n_802", notice("n_802", "802", "Busy."))).toBe("settled");
    expect(sendsTo("802")).toHaveLength(1);
  });
});

describe("the sweeper's notice retries", () => {
  it("retry a registered notice until it is delivered, backing off between sweeps, then forget it", async () => {
    failSendsTo("803", SERVER_ERROR, SERVER_ERROR, SERVER_ERROR);
    const n = notice("n_803", "803", "Queue full.");
    expect(await deliverChannelReply(deps(), n.runId, n)).toBe("retry");
    await registerPendingNotice(testDb.db, n);
    await registerPendingNotice(testDb.db, n); // a redelivery that failed too keeps the first entry
    expect(await pending("n_803")).toMatchObject({ tries: 0 });
    // First sweep: the retries (here one try each) fail again: it waits a minute.
    expect((await retryPendingNotices(deps())).waiting).toContain("n_803");
    const after = (await pending("n_803"))!;
    expect(after.tries).toBe(1);
    expect(after.nextAt).toBeGreaterThanOrEqual(testDb.db.now() + NOTICE_RETRY.baseDelayMs - 5_000);
    // Not due yet: a sweep right after leaves it alone.
    expect((await retryPendingNotices(deps())).waiting).not.toContain("n_803");
    expect(sendsTo("803")).toHaveLength(2);
    // Due again (a later sweep): fails once more, then is delivered.
    const later = { ...testDb.db, now: () => Date.now() + 10 * 60_000 };
    expect((await retryPendingNotices({ ...deps(), db: later })).waiting).toContain("n_803");
    const evenLater = { ...testDb.db, now: () => Date.now() + 60 * 60_000 };
    expect((await retryPendingNotices({ ...deps(), db: evenLater })).delivered).toContain("n_803");
    expect(await pending("n_803")).toBeUndefined();
    expect(telegram.messagesIn("803")).toEqual(["Queue full."]);
    expect(sendsTo("803")).toHaveLength(4);
  });

  it("give a notice up after its last try: the ledger is closed, nothing more is sent", async () => {
    failSendsTo("804", ...Array.from({ length: NOTICE_RETRY.maxTries + 1 }, () => SERVER_ERROR));
    const n = notice("n_804", "804", "Never shown.");
    await deliverChannelReply(deps(), n.runId, n);
    await registerPendingNotice(testDb.db, n);
    for (let sweep = 1; sweep <= NOTICE_RETRY.maxTries; sweep++) {
      const at = { ...testDb.db, now: () => Date.now() + sweep * 24 * 3600_000 };
      const report = await retryPendingNotices({ ...deps(), db: at });
      expect(sweep < NOTICE_RETRY.maxTries ? report.waiting : report.gaveUp).toContain("n_804");
    }
    expect(await pending("n_804")).toBeUndefined();
    expect(await readLedger(testDb.db, "n_804")).toMatchObject({ done: true, outcome: "failed" });
    expect(sendsTo("804")).toHaveLength(NOTICE_RETRY.maxTries + 1);
    expect(telegram.messagesIn("804")).toEqual([]);
  });
});

describe("a final reply the platform refused past delivery's own backoff", () => {
  it("is registered for the sweeper and delivered once by a later sweep; a delivered one is not registered", async () => {
    failSendsTo("805", SERVER_ERROR);
    const answer: DeliverableRun = { ...notice("n_805", "805", "The answer."), status: "ok", result: { payloads: [{ text: "The answer." }], meta: {} } };
    await deliverReplyOrRegister(deps(), answer.runId, answer);
    expect(await pending("n_805")).toMatchObject({ tries: 0, notice: { status: "ok" } });
    expect(telegram.messagesIn("805")).toEqual([]);
    expect((await retryPendingNotices(deps())).delivered).toContain("n_805");
    expect(await pending("n_805")).toBeUndefined();
    expect(telegram.messagesIn("805")).toEqual(["The answer."]);

    const delivered: DeliverableRun = { ...answer, runId: "n_806", channelTarget: { kind: "telegram", accountId: "main", chatId: "806" } };
    await deliverReplyOrRegister(deps(), delivered.runId, delivered);
    expect(await pending("n_806")).toBeUndefined();
    expect(telegram.messagesIn("806")).toEqual(["The answer."]);
  });
});
