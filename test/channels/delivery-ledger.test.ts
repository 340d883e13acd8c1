import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GetCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { createRun } from "../../shared/aws/runs";
import { endedChannelRun } from "../support/ended-run";
import type { Db } from "../../shared/aws/dynamo";
import { ChannelsConfigSchema } from "../../shared/config/channels-config";
import { deliverChannelReply } from "../../shared/channels/deliver";
import { readLedger } from "../../shared/channels/ledger";
import { silentLog } from "../../shared/run/deps";
import { FAKE_TELEGRAM_TOKEN, FakeTelegramServer } from "../support/fake-telegram-server";
import { startTestDb, type TestDb } from "../support/local-db";

let testDb: TestDb;
let telegram: FakeTelegramServer;
const noWait = { attempts: 3, baseDelayMs: 0, maxDelayMs: 0, sleep: async () => undefined };

beforeAll(async () => {
  [testDb, telegram] = await Promise.all([startTestDb(), FakeTelegramServer.start()]);
});
afterAll(async () => {
  await telegram?.close();
  await testDb?.close();
});

const channels = () => ChannelsConfigSchema.parse({ telegram: { accounts: { main: { botToken: FAKE_TELEGRAM_TOKEN, webhookSecret: "s", apiBaseUrl: telegram.baseUrl } } } });

async function endedRun(runId: string, chatId: string, text: string): Promise<void> {
  const run = endedChannelRun(runId, `agent:main:telegram:direct:${chatId}`, text, { kind: "telegram", accountId: "main", chatId });
  expect(await createRun(testDb.db, run)).toBe(true);
}

/** The Lambda dies right after the platform accepted the message, before the ledger records it. */
function crashingAfterSend(db: Db): Db {
  const send = (command: unknown) => {
    if (command instanceof UpdateCommand && (command.input.ExpressionAttributeValues?.[":part"] as { state?: string })?.state === "sent") {
      return Promise.reject(new Error("Runtime exited (simulated crash between send and ledger write)"));
    }
    return db.doc.send(command as never);
  };
  return { ...db, doc: { send } as unknown as Db["doc"] };
}

describe("delivery ledger", () => {
  it("a crash between the final send and its ledger write does not send twice", async () => {
    await endedRun("run_crash", "700", "Exactly once.");
    const deps = { channels: channels(), log: silentLog, retry: noWait };
    await expect(deliverChannelReply({ ...deps, db: crashingAfterSend(testDb.db) }, "run_crash")).rejects.toThrow(/simulated crash/);
    // The retried finalize (Step Functions Retry) delivers again.
    await deliverChannelReply({ ...deps, db: testDb.db }, "run_crash");
    await deliverChannelReply({ ...deps, db: testDb.db }, "run_crash");
    expect(telegram.method("sendMessage").filter((call) => call.body.chat_id === "700")).toHaveLength(1);
    expect(telegram.messagesIn("700")).toEqual(["Exactly once."]);
    expect(await readLedger(testDb.db, "run_crash")).toMatchObject({ done: true, parts: { "0": { state: "sending" } } });
  });

  it("retries a platform 5xx and 429 retry_after, then sends once; a second delivery sends nothing", async () => {
    await endedRun("run_retry", "701", "After retries.");
    telegram.script(
      { status: 502, body: { ok: false, error_code: 502, description: "Bad Gateway" } },
      { status: 429, body: { ok: false, error_code: 429, description: "Too Many Requests: retry after 1", parameters: { retry_after: 1 } } },
    );
    const waits: number[] = [];
    const retry = { ...noWait, attempts: 5, baseDelayMs: 10, maxDelayMs: 100, sleep: async (ms: number) => void waits.push(ms) };
    await deliverChannelReply({ db: testDb.db, channels: channels(), log: silentLog, retry }, "run_retry");
    await deliverChannelReply({ db: testDb.db, channels: channels(), log: silentLog, retry }, "run_retry");
    expect(waits).toEqual([10, 1000]);
    expect(telegram.messagesIn("701")).toEqual(["After retries."]);
    expect(await readLedger(testDb.db, "run_retry")).toMatchObject({ done: true, outcome: "delivered", parts: { "0": { state: "sent", messageId: expect.any(String) } } });
  });

  it("splits an answer past Telegram's 4096 characters into ordered messages", async () => {
    const long = `${"First paragraph. ".repeat(200).trim()}\n\n${"Second paragraph. ".repeat(100).trim()}`;
    await endedRun("run_long", "702", long);
    await deliverChannelReply({ db: testDb.db, channels: channels(), log: silentLog, retry: noWait }, "run_long");
    const messages = telegram.messagesIn("702");
    expect(messages.length).toBe(2);
    expect(messages.every((m) => m.length <= 4096)).toBe(true);
    expect(messages.join("\n\n")).toBe(long);
  });
});

describe("streamed preview", () => {
  it("sends once, edits as the text grows, and finalize finishes the same message with the exact final text", async () => {
    const { ChannelPreview } = await import("../../shared/channels/preview");
    const { messengerFor } = await import("../../shared/channels/messenger");
    await endedRun("run_stream", "710", "Now hello world, all of it.");
    const messenger = messengerFor(channels(), { kind: "telegram", accountId: "main", chatId: "710" })!;
    const preview = new ChannelPreview({ db: testDb.db, log: silentLog }, "run_stream", { ...messenger, editIntervalMs: 0 });
    preview.add("N");
    await preview.settle();
    expect(telegram.messagesIn("710")).toEqual([]); // could still be NO_REPLY: held back
    preview.add("ow hello ");
    await telegram.waitFor(() => telegram.messagesIn("710").length === 1, 10_000, "the preview");
    await preview.settle();
    preview.add("world");
    await telegram.waitFor(() => telegram.method("editMessageText").some((c) => c.body.chat_id === "710"), 10_000, "an edit");
    await preview.settle();
    await deliverChannelReply({ db: testDb.db, channels: channels(), log: silentLog, retry: noWait }, "run_stream");
    expect(telegram.method("sendMessage").filter((c) => c.body.chat_id === "710")).toHaveLength(1);
    expect(telegram.messagesIn("710")).toEqual(["Now hello world, all of it."]);
    expect(telegram.method("editMessageText").filter((c) => c.body.chat_id === "710").map((c) => c.body.text)).toEqual(["Now hello world", "Now hello world, all of it."]);
  });

  it("a preview edit that lands after the final reply (an attempt outliving its run) is undone: the chat ends on the final text", async () => {
    const { ChannelPreview } = await import("../../shared/channels/preview");
    const { messengerFor } = await import("../../shared/channels/messenger");
    await endedRun("run_zombie", "720", "The run was stopped.");
    const messenger = { ...messengerFor(channels(), { kind: "telegram", accountId: "main", chatId: "720" })!, editIntervalMs: 0 };
    let reached!: () => void;
    const editReached = new Promise<void>((resolve) => (reached = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    // The stale attempt's edit is held in flight until the final delivery is over, so it reaches the platform last.
    const stale = { ...messenger, edit: async (id: string, text: string) => (reached(), await released, messenger.edit(id, text)) };
    const preview = new ChannelPreview({ db: testDb.db, log: silentLog }, "run_zombie", stale);
    preview.add("A partial ");
    await telegram.waitFor(() => telegram.messagesIn("720").length === 1, 10_000, "the preview");
    await preview.settle();
    preview.add("answer");
    await editReached;
    await deliverChannelReply({ db: testDb.db, channels: channels(), log: silentLog, retry: noWait }, "run_zombie");
    expect(telegram.messagesIn("720")).toEqual(["The run was stopped."]);
    release();
    await preview.settle();
    const edits = telegram.method("editMessageText").filter((c) => c.body.chat_id === "720").map((c) => c.body.text);
    expect(edits).toEqual(["The run was stopped.", "A partial answer", "The run was stopped."]);
    expect(telegram.messagesIn("720")).toEqual(["The run was stopped."]);
    expect(telegram.method("sendMessage").filter((c) => c.body.chat_id === "720")).toHaveLength(1);
    expect(await readLedger(testDb.db, "run_zombie")).toMatchObject({ done: true, closing: { text: "The run was stopped." }, parts: { "0": { state: "sent", text: "The run was stopped." } } });
  });

  it("a preview that streams on after the final reply began touches the chat no more", async () => {
    const { ChannelPreview } = await import("../../shared/channels/preview");
    const { messengerFor } = await import("../../shared/channels/messenger");
    await endedRun("run_late", "721", "Final.");
    const messenger = { ...messengerFor(channels(), { kind: "telegram", accountId: "main", chatId: "721" })!, editIntervalMs: 0 };
    let readAfterFinal: (() => void) | undefined;
    const pushed = new Promise<void>((resolve) => (readAfterFinal = resolve));
    let finalDone = false;
    // Signals the preview's next push (its ledger read) once the final reply is out.
    const watched: Db = { ...testDb.db, doc: { send: (command: unknown) => (finalDone && command instanceof GetCommand && readAfterFinal?.(), testDb.db.doc.send(command as never)) } as unknown as Db["doc"] };
    const preview = new ChannelPreview({ db: watched, log: silentLog }, "run_late", messenger);
    preview.add("Partial ");
    await telegram.waitFor(() => telegram.messagesIn("721").length === 1, 10_000, "the preview");
    await preview.settle();
    await deliverChannelReply({ db: testDb.db, channels: channels(), log: silentLog, retry: noWait }, "run_late");
    finalDone = true;
    preview.add("text that must never show");
    await pushed;
    await preview.settle();
    expect(telegram.method("editMessageText").filter((c) => c.body.chat_id === "721").map((c) => c.body.text)).toEqual(["Final."]);
    expect(telegram.messagesIn("721")).toEqual(["Final."]);
  });

  it("a preview whose first send crashed mid-flight (sent, never recorded): the final text goes out as a new message, once", async () => {
    const { ChannelPreview } = await import("../../shared/channels/preview");
    const { messengerFor } = await import("../../shared/channels/messenger");
    await endedRun("run_preview_crash", "730", "The whole final answer.");
    const messenger = { ...messengerFor(channels(), { kind: "telegram", accountId: "main", chatId: "730" })!, editIntervalMs: 0 };
    // The attempt's Lambda dies right after Telegram accepted the preview's sendMessage: part 0 stays the preview's claim.
    const preview = new ChannelPreview({ db: crashingAfterSend(testDb.db), log: silentLog }, "run_preview_crash", messenger);
    preview.add("The whole ");
    await telegram.waitFor(() => telegram.messagesIn("730").length === 1, 10_000, "the preview");
    await preview.settle();
    expect(await readLedger(testDb.db, "run_preview_crash")).toMatchObject({ parts: { "0": { state: "sending", preview: true } } });
    const deps = { db: testDb.db, channels: channels(), log: silentLog, retry: noWait };
    await deliverChannelReply(deps, "run_preview_crash");
    await deliverChannelReply(deps, "run_preview_crash");
    const sends = telegram.method("sendMessage").filter((c) => c.body.chat_id === "730").map((c) => c.body.text);
    expect(sends).toEqual(["The whole ", "The whole final answer."]);
    // The lost preview cannot be edited (its message id never came back); the chat ends on the final text.
    expect(telegram.messagesIn("730").at(-1)).toBe("The whole final answer.");
    expect(await readLedger(testDb.db, "run_preview_crash")).toMatchObject({ done: true, parts: { "0": { state: "sent", text: "The whole final answer." } } });
  });

  it("a preview send still in flight when the final delivery takes it over is removed: the final text shows once", async () => {
    const { ChannelPreview } = await import("../../shared/channels/preview");
    const { messengerFor } = await import("../../shared/channels/messenger");
    await endedRun("run_preview_race", "731", "Final, once.");
    const messenger = { ...messengerFor(channels(), { kind: "telegram", accountId: "main", chatId: "731" })!, editIntervalMs: 0 };
    let reached!: () => void;
    const sendReached = new Promise<void>((resolve) => (reached = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    // The outliving attempt's first send is held until the final delivery is over, so its message lands last.
    const stale = { ...messenger, send: async (text: string) => (reached(), await released, messenger.send(text)) };
    const preview = new ChannelPreview({ db: testDb.db, log: silentLog }, "run_preview_race", stale);
    preview.add("Partial ");
    await sendReached;
    await deliverChannelReply({ db: testDb.db, channels: channels(), log: silentLog, retry: noWait }, "run_preview_race");
    expect(telegram.messagesIn("731")).toEqual(["Final, once."]);
    release();
    await telegram.waitFor(() => telegram.method("deleteMessage").some((c) => c.body.chat_id === "731"), 10_000, "the late preview removed");
    await preview.settle();
    expect(telegram.messagesIn("731")).toEqual(["Final, once."]);
    expect(await readLedger(testDb.db, "run_preview_race")).toMatchObject({ done: true, parts: { "0": { state: "sent", text: "Final, once." } } });
  });
});
