/**
 * Channel messages the session lane refuses before they have a run record
 * (issue 13), on the deployed local stack against the fake Telegram Bot API
 * and Slack Web API:
 *  - queue mode `reject` while the session is busy (Telegram) and a full
 *    queue with drop `new` (Slack) answer the chat once with the text a REST
 *    caller gets in its SESSION_BUSY error, across a redelivered update and
 *    Slack's two events of one post; nothing runs;
 *  - a signed hook refused the same way answers its caller 429 SESSION_BUSY
 *    (the REST answer; the sender may send again), nothing to its replyUrl;
 *  - a notice the platform 500s inside the webhook request is retried by the
 *    sweeper and reaches the chat exactly once;
 *  - the typing indicator (Telegram sendChatAction) and the `eyes` reaction
 *    (Slack reactions.add) go out, and a platform failing them never blocks
 *    or fails the run.
 * Each session's first run is held mid-answer by the fake model (a barrier
 * the test releases), so the session is busy while the later messages come
 * in: no timing.
 */
import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { keys } from "../../shared/aws/keys";
import { getRun, TERMINAL_STATUSES, type RunRecord } from "../../shared/aws/runs";
import { readLedger } from "../../shared/channels/ledger";
import { refusedNoticeId } from "../../shared/channels/refused-notice";
import { runIdForIdempotencyKey } from "../../shared/core/ids";
import { chat } from "../support/fake-openai-server";
import type { RecordedCall } from "../support/recording-server";
import { barrier } from "../support/scripted-sse-server";
import { until } from "../support/until";
import { BOT_USER_ID, postHook, postSlack, postTelegram, startChannelStack, stopChannelStack, telegramUpdate, type ChannelStack } from "../support/channel-stack";

let env: ChannelStack;
// A loaded shared machine: wait for conditions, generously, never for time.
vi.setConfig({ testTimeout: 300_000 });

beforeAll(async () => {
  env = await startChannelStack({
    byChannel: { telegram: { mode: "reject" }, slack: { mode: "followup", cap: 1, drop: "new" }, hook: { mode: "reject" } },
  });
}, 180_000);
afterAll(async () => stopChannelStack(env ?? {}));

const SERVER_ERROR = { status: 500, body: { ok: false, error_code: 500, description: "Internal Server Error" } };

const ended = (runId: string) =>
  until<RunRecord>(async () => {
    const run = await getRun(env.stack.deps.db, runId);
    return run && TERMINAL_STATUSES.has(run.status) ? run : undefined;
  }, `run ${runId} to end`, 240_000);

/** A run whose model call holds mid-answer until the returned release is called. */
async function heldRun(post: () => Promise<{ body: any }>, text: string): Promise<{ runId: string; release: () => void }> {
  const held = barrier();
  const before = env.oai.requests.length;
  env.oai.enqueue({ ...chat.text(text), hold: { afterFrames: 1, until: held.promise } } as never);
  const runId = String((await post()).body.runId);
  await until(async () => (env.oai.requests.length > before ? true : undefined), "the held model call", 240_000);
  return { runId, release: held.release };
}

const telegramBusy = (chatId: number) => `session agent:main:telegram:direct:${chatId} is busy; the message was not accepted (queue mode reject)`;

function telegramSends(chatId: number, text: string): RecordedCall[] {
  return env.telegram.method("sendMessage").filter((c) => c.body.chat_id === String(chatId) && c.body.text === text);
}

function dm(chatId: number, text: string) {
  return telegramUpdate(text, { id: chatId, type: "private" }, { id: chatId });
}

/** The run id the intake gives a Telegram message (its logical message key). */
function telegramRunId(chatId: number, update: ReturnType<typeof telegramUpdate>): string {
  return runIdForIdempotencyKey(`telegram:main:${chatId}:${update.message.message_id}`);
}

async function pendingNotice(id: string) {
  return (await env.stack.deps.db.doc.send(new GetCommand({ TableName: env.stack.deps.db.table, Key: keys.pendingNotice(id), ConsistentRead: true }))).Item;
}

describe("a Telegram message refused while its session is busy (queue mode reject)", () => {
  it("answers the chat with the refusal once, also when the update is redelivered; nothing runs", async () => {
    const chatId = 731;
    const first = await heldRun(() => postTelegram(env.stack, dm(chatId, "first")), "First answer.");
    const refused = dm(chatId, "second");
    const answer = await postTelegram(env.stack, refused);
    expect(answer).toMatchObject({ status: 200, body: { ok: true, refused: "busy" } });
    // Tried inside the request, before the 200.
    expect(telegramSends(chatId, telegramBusy(chatId))).toHaveLength(1);
    expect(env.telegram.messagesIn(String(chatId))).toContain(telegramBusy(chatId));
    // Telegram redelivers the same update (its 200 was lost): the notice is not sent again.
    expect(await postTelegram(env.stack, refused)).toMatchObject({ status: 200, body: { refused: "busy" } });
    expect(telegramSends(chatId, telegramBusy(chatId))).toHaveLength(1);
    const runId = telegramRunId(chatId, refused);
    expect(await getRun(env.stack.deps.db, runId)).toBeUndefined();
    expect(await readLedger(env.stack.deps.db, refusedNoticeId(runId))).toMatchObject({ done: true, parts: { "0": { state: "sent" } } });
    first.release();
    expect((await ended(first.runId)).status).toBe("ok");
    await env.stack.idle();
    expect(env.telegram.messagesIn(String(chatId)).sort()).toEqual([telegramBusy(chatId), "First answer."].sort());
    expect(telegramSends(chatId, telegramBusy(chatId))).toHaveLength(1);
    expect(await getRun(env.stack.deps.db, runId)).toBeUndefined();
  });

  it("a notice the platform 500s inside the request is retried by the sweeper and reaches the chat once", async () => {
    const chatId = 732;
    const notice = telegramBusy(chatId);
    env.telegram.scriptWhen((c) => c.path.endsWith("/sendMessage") && c.body.chat_id === String(chatId) && c.body.text === notice, SERVER_ERROR);
    const first = await heldRun(() => postTelegram(env.stack, dm(chatId, "first")), "First answer.");
    const refused = dm(chatId, "second");
    expect(await postTelegram(env.stack, refused)).toMatchObject({ status: 200, body: { refused: "busy" } });
    // The one try inside the request got the 500: nothing shown, the notice waits for the sweeper.
    expect(telegramSends(chatId, notice)).toHaveLength(1);
    expect(env.telegram.messagesIn(String(chatId))).not.toContain(notice);
    const id = refusedNoticeId(telegramRunId(chatId, refused));
    expect(await pendingNotice(id)).toMatchObject({ tries: 0, notice: { runId: id } });
    await env.stack.sweepNow();
    await env.telegram.waitFor(() => env.telegram.messagesIn(String(chatId)).includes(notice), 120_000, "the retried notice");
    await until(async () => ((await pendingNotice(id)) === undefined ? true : undefined), "the pending notice to be forgotten", 120_000);
    // Another sweep (and the redelivered update) sends nothing more.
    await env.stack.sweepNow();
    expect(await postTelegram(env.stack, refused)).toMatchObject({ status: 200, body: { refused: "busy" } });
    expect(telegramSends(chatId, notice)).toHaveLength(2); // the 500, then the one delivered
    first.release();
    expect((await ended(first.runId)).status).toBe("ok");
    await env.stack.idle();
    expect(env.telegram.messagesIn(String(chatId)).filter((text) => text === notice)).toHaveLength(1);
    expect(await readLedger(env.stack.deps.db, id)).toMatchObject({ done: true, parts: { "0": { state: "sent" } } });
  });

  it("a platform that hangs on the notice inside the request does not hold the 200; the sweeper delivers the notice once", async () => {
    const chatId = 733;
    const notice = telegramBusy(chatId);
    const hung = barrier();
    // The in-request try hangs (held until the test releases it, then fails: nothing was sent by it).
    env.telegram.scriptWhen((c) => c.path.endsWith("/sendMessage") && c.body.chat_id === String(chatId) && c.body.text === notice, { ...SERVER_ERROR, hold: hung.promise });
    const first = await heldRun(() => postTelegram(env.stack, dm(chatId, "first")), "First answer.");
    const refused = dm(chatId, "second");
    // Answered while the platform still holds the notice: the in-request call gave up (short timeout), the 10 s one would not have.
    const acked = await postTelegram(env.stack, refused);
    expect(acked).toMatchObject({ status: 200, body: { refused: "busy" } });
    expect(telegramSends(chatId, notice)).toHaveLength(1);
    const id = refusedNoticeId(telegramRunId(chatId, refused));
    expect(await pendingNotice(id)).toMatchObject({ tries: 0, notice: { runId: id } });
    await env.stack.sweepNow();
    await env.telegram.waitFor(() => env.telegram.messagesIn(String(chatId)).includes(notice), 120_000, "the retried notice");
    hung.release();
    await until(async () => ((await pendingNotice(id)) === undefined ? true : undefined), "the pending notice to be forgotten", 120_000);
    await env.stack.sweepNow();
    expect(telegramSends(chatId, notice)).toHaveLength(2); // the hung one, then the one delivered
    first.release();
    expect((await ended(first.runId)).status).toBe("ok");
    await env.stack.idle();
    expect(env.telegram.messagesIn(String(chatId)).filter((text) => text === notice)).toHaveLength(1);
    expect(await readLedger(env.stack.deps.db, id)).toMatchObject({ done: true, parts: { "0": { state: "sent" } } });
  });

  it("the typing indicator failing (500) neither blocks nor fails the run", async () => {
    const chatId = 733;
    env.telegram.scriptWhen((c) => c.path.endsWith("/sendChatAction") && c.body.chat_id === String(chatId), SERVER_ERROR, SERVER_ERROR, SERVER_ERROR);
    env.oai.enqueue(chat.text("Answered anyway."));
    const answer = await postTelegram(env.stack, dm(chatId, "hello"));
    expect((await ended(String(answer.body.runId))).status).toBe("ok");
    await env.telegram.waitFor(() => env.telegram.messagesIn(String(chatId)).includes("Answered anyway."), 120_000, "the answer");
    expect(env.telegram.method("sendChatAction").filter((c) => c.body.chat_id === String(chatId)).length).toBeGreaterThanOrEqual(1);
    expect(env.telegram.method("sendChatAction").find((c) => c.body.chat_id === String(chatId))?.body).toMatchObject({ action: "typing" });
  });
});

describe("a Slack mention refused because the session queue is full (drop new)", () => {
  it("answers in its thread once for the post's two events; the runs that got in get the eyes reaction and their answers", async () => {
    const channel = "C7";
    const root = "1700000700.000100";
    const event = (ts: string, text: string) => ({ user: "UALICE", text: `<@${BOT_USER_ID}> ${text}`, channel, channel_type: "channel", ts, thread_ts: root });
    const mention = (id: string, ts: string, text: string) => postSlack(env.stack, { type: "event_callback", event_id: id, event: { type: "app_mention", ...event(ts, text) } });
    const first = await heldRun(() => mention("EvR1", "1700000701.000001", "first"), "First in thread.");
    const queued = await mention("EvR2", "1700000702.000001", "second");
    expect(queued.body.runId).toEqual(expect.any(String));
    const notice = `session agent:main:slack:channel:${channel}:thread:${root} is busy and its queue is full; the message was not accepted`;
    // The third post arrives as app_mention and as message: refused twice, one notice.
    const third = event("1700000703.000001", "third");
    const asMention = await postSlack(env.stack, { type: "event_callback", event_id: "EvR3a", event: { type: "app_mention", ...third } });
    const asMessage = await postSlack(env.stack, { type: "event_callback", event_id: "EvR3b", event: { type: "message", ...third } });
    expect(asMention).toMatchObject({ status: 200, body: { refused: "queue_full" } });
    expect(asMessage).toMatchObject({ status: 200, body: { refused: "queue_full" } });
    const notices = () => env.slack.method("chat.postMessage").filter((c) => c.body.text === notice);
    expect(notices()).toHaveLength(1);
    expect(notices()[0].body).toMatchObject({ channel, thread_ts: root });
    // The running one was acknowledged with the eyes reaction on its message.
    await env.slack.waitFor(() => env.slack.method("reactions.add").some((c) => c.body.timestamp === "1700000701.000001"), 120_000, "the eyes reaction");
    expect(env.slack.method("reactions.add").find((c) => c.body.timestamp === "1700000701.000001")?.body).toMatchObject({ channel, name: "eyes" });
    env.oai.enqueue(chat.text("Second in thread."));
    first.release();
    expect((await ended(first.runId)).status).toBe("ok");
    expect((await ended(String(queued.body.runId))).status).toBe("ok");
    await env.stack.idle();
    const inThread = [...env.slack.messages.values()].filter((m) => m.channel === channel && m.threadTs === root).map((m) => m.text);
    expect(inThread.sort()).toEqual([notice, "First in thread.", "Second in thread."].sort());
    expect(notices()).toHaveLength(1);
    expect(await getRun(env.stack.deps.db, runIdForIdempotencyKey(`slack:main:${channel}:1700000703.000001`))).toBeUndefined();
  });

  it("the eyes reaction failing (500) neither blocks nor fails the run", async () => {
    const ts = "1700000710.000001";
    env.slack.scriptWhen((c) => c.path.endsWith("/reactions.add") && c.body.timestamp === ts, { status: 500, body: { ok: false, error: "internal_error" } });
    env.oai.enqueue(chat.text("Answered without eyes."));
    const answer = await postSlack(env.stack, { type: "event_callback", event_id: "EvR10", event: { type: "message", user: "UBOB", text: "hi", channel: "D7", channel_type: "im", ts } });
    expect((await ended(String(answer.body.runId))).status).toBe("ok");
    await env.slack.waitFor(() => [...env.slack.messages.values()].some((m) => m.channel === "D7" && m.text === "Answered without eyes."), 120_000, "the answer");
    expect(env.slack.method("reactions.add").filter((c) => c.body.timestamp === ts)).toHaveLength(1);
  });
});

describe("a signed hook message refused while its session is busy", () => {
  it("answers its caller 429 SESSION_BUSY with the REST text; nothing runs, nothing goes to replyUrl", async () => {
    const replyUrl = `${env.receiver.origin}/refused-hook`;
    const payload = (text: string) => ({ text, from: "refused-bot", replyUrl });
    const first = await heldRun(() => postHook(env.stack, payload("first")), "Hook first answer.");
    const refused = await postHook(env.stack, { ...payload("second"), idempotencyKey: "refused-hook-2" });
    expect(refused.status).toBe(429);
    expect(JSON.stringify(refused.body)).toContain("SESSION_BUSY");
    expect(JSON.stringify(refused.body)).toContain("session hook:default:refused-bot is busy; the message was not accepted (queue mode reject)");
    expect(await getRun(env.stack.deps.db, runIdForIdempotencyKey("hook:default:refused-hook-2"))).toBeUndefined();
    first.release();
    expect((await ended(first.runId)).status).toBe("ok");
    await env.receiver.waitFor(() => env.receiver.callsTo("/refused-hook").length >= 1, 120_000, "the first hook reply");
    await env.stack.idle();
    expect(env.receiver.callsTo("/refused-hook").map((c) => c.body.runId)).toEqual([first.runId]);
  });
});
