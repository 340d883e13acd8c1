/**
 * Channel messages that end without ever running still answer their chat
 * (issue 13), once, through the normal delivery and its ledger, on the
 * deployed local stack against the fake Telegram Bot API and a replyUrl
 * receiver:
 *  - a message dropped for the session queue cap (`drop: "old"`, cap 1) gets
 *    the drop notice as soon as a newer message pushes it out;
 *  - a queued message aborted before it started gets the abort notice (a
 *    second abort sends nothing more); a hook message gets its signed
 *    agent.reply with status `aborted`.
 * Each session's first run is held mid-answer by the fake model (a barrier
 * the test releases), so the later messages wait in the lane: no timing.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { getRun, TERMINAL_STATUSES, type RunRecord } from "../../shared/aws/runs";
import { readLedger } from "../../shared/channels/ledger";
import { DROPPED_ERROR } from "../../shared/intake/admission";
import { chat } from "../support/fake-openai-server";
import { barrier } from "../support/scripted-sse-server";
import { until } from "../support/until";
import { postHook, postTelegram, startChannelStack, stopChannelStack, telegramUpdate, type ChannelStack } from "../support/channel-stack";

const NOT_STARTED = "The run was aborted before it started.";

let env: ChannelStack;
// A loaded shared machine: wait for conditions, generously, never for time.
vi.setConfig({ testTimeout: 300_000 });

beforeAll(async () => {
  env = await startChannelStack({
    byChannel: { telegram: { mode: "followup", cap: 1, drop: "old" }, hook: { mode: "followup" } },
  });
}, 180_000);
afterAll(async () => stopChannelStack(env ?? {}));

const ended = (runId: string) =>
  until<RunRecord>(async () => {
    const run = await getRun(env.stack.deps.db, runId);
    return run && TERMINAL_STATUSES.has(run.status) ? run : undefined;
  }, `run ${runId} to end`, 240_000);

const status = (runId: string) => until(async () => (await getRun(env.stack.deps.db, runId))?.status, `run ${runId}`);

/** A run whose model call holds mid-answer until the returned release is called. */
async function heldRun(post: () => Promise<{ body: any }>, text: string): Promise<{ runId: string; release: () => void }> {
  const held = barrier();
  const before = env.oai.requests.length;
  env.oai.enqueue({ ...chat.text(text), hold: { afterFrames: 1, until: held.promise } } as never);
  const runId = String((await post()).body.runId);
  await until(async () => (env.oai.requests.length > before ? true : undefined), "the held model call", 240_000);
  return { runId, release: held.release };
}

function sendsOf(chatId: string, text: string) {
  return env.telegram.method("sendMessage").filter((c) => c.body.chat_id === chatId && c.body.text === text);
}

async function abort(runId: string): Promise<{ status: number; body: any }> {
  const response = await fetch(`${env.stack.restUrl}/v1/runs/${runId}/abort`, {
    method: "POST",
    headers: { authorization: `Bearer ${env.stack.authToken}`, "content-type": "application/json" },
    body: "{}",
  });
  return { status: response.status, body: await response.json() };
}

describe("a channel message dropped for the session queue cap", () => {
  it("answers its chat with the drop notice, once; the others are answered as usual", async () => {
    const chatId = 711;
    const message = (text: string) => () => postTelegram(env.stack, telegramUpdate(text, { id: chatId, type: "private" }, { id: chatId }));
    const first = await heldRun(message("first"), "First answer.");
    const second = String((await message("second")()).body.runId);
    expect(await status(second)).toBe("queued");
    env.oai.enqueue(chat.text("Third answer."));
    const third = String((await message("third")()).body.runId);
    // The cap is 1: the third pushed the second out (ended before it ever ran).
    const dropped = await ended(second);
    expect(dropped).toMatchObject({ status: "error", error: DROPPED_ERROR });
    await env.telegram.waitFor(() => sendsOf(String(chatId), DROPPED_ERROR).length === 1, 120_000, "the drop notice");
    first.release();
    expect((await ended(first.runId)).status).toBe("ok");
    expect((await ended(third)).status).toBe("ok");
    await env.telegram.waitFor(() => env.telegram.messagesIn(String(chatId)).includes("Third answer."), 120_000, "the third answer");
    await env.stack.idle();
    expect(env.telegram.messagesIn(String(chatId)).sort()).toEqual([DROPPED_ERROR, "First answer.", "Third answer."].sort());
    expect(sendsOf(String(chatId), DROPPED_ERROR)).toHaveLength(1);
    expect((await readLedger(env.stack.deps.db, second))?.done).toBe(true);
  });
});

describe("a channel message aborted before it started", () => {
  it("answers its Telegram chat with the abort notice, once, even when aborted again", async () => {
    const chatId = 712;
    const message = (text: string) => () => postTelegram(env.stack, telegramUpdate(text, { id: chatId, type: "private" }, { id: chatId }));
    const first = await heldRun(message("first"), "First answer.");
    const queued = String((await message("second")()).body.runId);
    expect(await status(queued)).toBe("queued");
    expect(await abort(queued)).toMatchObject({ status: 200, body: { aborted: true, status: "aborted" } });
    await env.telegram.waitFor(() => sendsOf(String(chatId), NOT_STARTED).length === 1, 120_000, "the abort notice");
    expect(await abort(queued)).toMatchObject({ status: 200, body: { aborted: false, status: "aborted" } });
    first.release();
    expect((await ended(first.runId)).status).toBe("ok");
    await env.stack.idle();
    expect(env.telegram.messagesIn(String(chatId)).sort()).toEqual([NOT_STARTED, "First answer."].sort());
    expect(sendsOf(String(chatId), NOT_STARTED)).toHaveLength(1);
  });

  it("posts a hook message's signed agent.reply with status aborted to its replyUrl, once", async () => {
    const replyUrl = `${env.receiver.origin}/unstarted`;
    const payload = (text: string) => ({ text, from: "unstarted-bot", replyUrl });
    const first = await heldRun(() => postHook(env.stack, payload("first")), "Hook first answer.");
    const queued = String((await postHook(env.stack, payload("second"))).body.runId);
    expect(await status(queued)).toBe("queued");
    expect((await abort(queued)).body).toMatchObject({ aborted: true });
    const replies = () => env.receiver.callsTo("/unstarted").filter((call) => call.body.runId === queued);
    await env.receiver.waitFor(() => replies().length === 1, 120_000, "the aborted hook reply");
    expect(replies()[0].body).toMatchObject({ type: "agent.reply", runId: queued, sessionKey: "hook:default:unstarted-bot", status: "aborted", text: NOT_STARTED });
    first.release();
    expect((await ended(first.runId)).status).toBe("ok");
    await env.stack.idle();
    expect(replies()).toHaveLength(1);
  });
});
