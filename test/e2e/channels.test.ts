import { ScanCommand } from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { slackSignature, verifyStandardWebhook } from "../../shared/channels/signatures";
import { chat } from "../support/fake-openai-server";
import {
  BOT_USER_ID,
  HOOK_SECRET,
  postHook,
  postSlack,
  postTelegram,
  SLACK_SIGNING_SECRET,
  startChannelStack,
  stopChannelStack,
  telegramUpdate,
  type ChannelStack,
} from "../support/channel-stack";

let env: ChannelStack;
// A loaded shared machine: wait for conditions, generously, never for time.
vi.setConfig({ testTimeout: 240_000 });

beforeAll(async () => {
  env = await startChannelStack();
});
afterAll(async () => stopChannelStack(env ?? {}));

/** The run's end (each wait answers within 20 s; `status: "timeout"` there means "not yet"). */
async function runOf(runId: string): Promise<any> {
  for (let i = 0; ; i++) {
    const response = await fetch(`${env.stack.restUrl}/v1/runs/${runId}/wait`, {
      method: "POST",
      headers: { authorization: `Bearer ${env.stack.authToken}`, "content-type": "application/json" },
      body: JSON.stringify({ timeoutMs: 20_000 }),
    });
    const result = (await response.json()) as any;
    if (result.status !== "timeout" || i >= 10) return result;
  }
}

async function itemsWith(prefix: RegExp): Promise<Record<string, unknown>[]> {
  const out = await env.stack.deps.db.doc.send(new ScanCommand({ TableName: env.stack.deps.db.table }));
  return (out.Items ?? []).filter((item) => prefix.test(String(item.pk)));
}

describe("signed generic hook", () => {
  it("accepts 202 {runId, sessionKey} and POSTs the signed agent.reply to replyUrl once", async () => {
    env.oai.enqueue(chat.text("Hook answer, exactly."));
    const replyUrl = `${env.receiver.origin}/reply`;
    const accepted = await postHook(env.stack, { text: "ping", from: "ci-bot", replyUrl });
    expect(accepted.status).toBe(202);
    expect(accepted.body).toEqual({ runId: expect.any(String), sessionKey: "hook:default:ci-bot" });
    await env.receiver.waitFor(() => env.receiver.callsTo("/reply").length >= 1, 180_000, "the hook reply");
    const [call] = env.receiver.callsTo("/reply");
    expect(call.body).toMatchObject({ type: "agent.reply", runId: accepted.body.runId, sessionKey: "hook:default:ci-bot", status: "ok", text: "Hook answer, exactly." });
    const headers = { id: String(call.headers["webhook-id"]), timestamp: String(call.headers["webhook-timestamp"]), signature: String(call.headers["webhook-signature"]) };
    expect(verifyStandardWebhook(HOOK_SECRET, headers, Buffer.from(call.rawBody), Date.now())).toBe(true);
    // A redelivery of the same webhook-id starts nothing and sends nothing more.
    await env.stack.idle();
    expect(env.receiver.callsTo("/reply")).toHaveLength(1);
  });

  it("refuses bad signatures, stale timestamps, unknown hooks, bad JSON and oversized bodies, writing nothing", async () => {
    const before = (await itemsWith(/^(RUN|CHIN|SESSION)#/)).length;
    const body = { text: "x", from: "a" };
    expect((await postHook(env.stack, body, { secret: `whsec_${Buffer.from("wrong").toString("base64")}` })).status).toBe(401);
    expect((await postHook(env.stack, body, { nowMs: Date.now() - 6 * 60_000 })).status).toBe(401);
    expect((await postHook(env.stack, body, { hookId: "nope" })).status).toBe(404);
    expect((await postHook(env.stack, { text: "x" })).status).toBe(400);
    expect((await postHook(env.stack, { text: "x".repeat(300 * 1024), from: "a" })).status).toBe(413);
    const unsigned = await fetch(`${env.stack.restUrl}/v1/hooks/default`, { method: "POST", body: JSON.stringify(body) });
    expect(unsigned.status).toBe(401);
    expect((await itemsWith(/^(RUN|CHIN|SESSION)#/)).length).toBe(before);
  });
});

describe("Telegram", () => {
  it("answers a DM with the exact final text, once, even when the update is redelivered", async () => {
    env.oai.enqueue(chat.text("Hello from the runner."));
    const update = telegramUpdate("hi bot", { id: 501, type: "private" }, { id: 501 });
    const first = await postTelegram(env.stack, update);
    expect(first.status).toBe(200);
    const again = await postTelegram(env.stack, update);
    expect(again).toMatchObject({ status: 200, body: { runId: first.body.runId, duplicate: true } });
    const run = await runOf(first.body.runId);
    expect(run.status).toBe("ok");
    await env.telegram.waitFor(() => env.telegram.messagesIn("501").includes("Hello from the runner."), 60_000, "the Telegram reply");
    await env.stack.idle();
    expect(env.telegram.messagesIn("501")).toEqual(["Hello from the runner."]);
    expect(env.telegram.method("sendMessage").filter((c) => c.body.chat_id === "501")).toHaveLength(1);
    expect(env.telegram.method("sendChatAction").length).toBeGreaterThanOrEqual(1);
  });

  it("streams a long answer as one message edited as it grows, ending with exactly the final text", async () => {
    const answer = Array.from({ length: 24 }, (_, i) => `Sentence number ${i + 1} of the streamed answer.`).join(" ");
    env.oai.enqueue({ ...chat.text(answer), frameDelayMs: 40 } as never);
    const accepted = await postTelegram(env.stack, telegramUpdate("tell me a story", { id: 503, type: "private" }, { id: 503 }));
    expect((await runOf(accepted.body.runId)).status).toBe("ok");
    await env.telegram.waitFor(() => env.telegram.messagesIn("503")[0] === answer, 60_000, "the final text");
    await env.stack.idle();
    const sends = env.telegram.method("sendMessage").filter((c) => c.body.chat_id === "503");
    const edits = env.telegram.method("editMessageText").filter((c) => c.body.chat_id === "503");
    expect(sends).toHaveLength(1);
    expect(env.telegram.messagesIn("503")).toEqual([answer]);
    // Whatever the timing, every state the user saw was a prefix of the answer, growing.
    const shown = [sends[0].body.text, ...edits.map((e) => e.body.text)] as string[];
    for (const [i, text] of shown.entries()) {
      expect(answer.startsWith(text.trimEnd())).toBe(true);
      if (i > 0) expect(text.length).toBeGreaterThan(shown[i - 1].length);
    }
  });

  it("answers a group mention in reply to it and ignores group messages without a mention", async () => {
    const ignored = await postTelegram(env.stack, telegramUpdate("just chatting", { id: -900, type: "supergroup" }, { id: 7 }));
    expect(ignored).toMatchObject({ status: 200, body: { ignored: "group message without a mention" } });
    env.oai.enqueue(chat.text("Group answer."));
    const update = telegramUpdate("@runner_bot what time is it", { id: -900, type: "supergroup" }, { id: 7 });
    const accepted = await postTelegram(env.stack, update);
    await runOf(accepted.body.runId);
    await env.telegram.waitFor(() => env.telegram.messagesIn("-900").length === 1, 60_000, "the group reply");
    const [send] = env.telegram.method("sendMessage").filter((c) => c.body.chat_id === "-900");
    expect(send.body).toMatchObject({ text: "Group answer.", reply_parameters: { message_id: update.message.message_id } });
  });

  it("sends nothing for NO_REPLY", async () => {
    env.oai.enqueue(chat.text("NO_REPLY"));
    const accepted = await postTelegram(env.stack, telegramUpdate("stay quiet", { id: 502, type: "private" }, { id: 502 }));
    expect((await runOf(accepted.body.runId)).status).toBe("ok");
    await env.stack.idle();
    expect(env.telegram.messagesIn("502")).toEqual([]);
  });

  it("refuses a wrong secret token (401) and an unknown account (404)", async () => {
    expect((await postTelegram(env.stack, telegramUpdate("x"), "wrong")).status).toBe(401);
    expect((await postTelegram(env.stack, telegramUpdate("x"), undefined, "other")).status).toBe(404);
  });
});

describe("Slack", () => {
  it("answers a mention in a thread in that thread; message + app_mention of one post give one run and one reply", async () => {
    expect((await postSlack(env.stack, { type: "url_verification", challenge: "c-123" })).body).toEqual({ challenge: "c-123" });
    env.oai.enqueue(chat.text("Thread answer."));
    const event = { user: "UALICE", text: `<@${BOT_USER_ID}> help`, channel: "C1", channel_type: "channel", ts: "1700000100.000200", thread_ts: "1700000000.000100" };
    const mention = await postSlack(env.stack, { type: "event_callback", event_id: "Ev1", event: { type: "app_mention", ...event } });
    const message = await postSlack(env.stack, { type: "event_callback", event_id: "Ev2", event: { type: "message", ...event } });
    expect(mention.status).toBe(200);
    expect(message.body.runId).toBe(mention.body.runId);
    expect(message.body.duplicate).toBe(true);
    expect((await runOf(mention.body.runId)).status).toBe("ok");
    await env.slack.waitFor(() => env.slack.method("chat.postMessage").length >= 1, 60_000, "the Slack reply");
    await env.stack.idle();
    const posts = env.slack.method("chat.postMessage");
    expect(posts).toHaveLength(1);
    expect(posts[0].body).toMatchObject({ channel: "C1", thread_ts: "1700000000.000100", text: "Thread answer." });
  });

  it("verifies the raw bytes of a body that is not valid UTF-8 (API Gateway passes it base64-encoded)", async () => {
    env.oai.enqueue(chat.text("Bytes answered."));
    const envelope = JSON.stringify({ type: "event_callback", event_id: "EvBytes", event: { type: "message", user: "UBYTES", text: "hi XX", channel: "D9", channel_type: "im", ts: "1700000900.000100" } });
    // Two bytes of the text replaced by 0xFF 0xFE: not UTF-8, so the front door base64-encodes the body.
    const raw = Buffer.from(envelope, "utf8");
    const marker = raw.indexOf("XX");
    const body = Buffer.concat([raw.subarray(0, marker), Buffer.from([0xff, 0xfe]), raw.subarray(marker + 2)]);
    const timestamp = String(Math.floor(Date.now() / 1000));
    const response = await fetch(`${env.stack.restUrl}/v1/channels/slack/main`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-slack-request-timestamp": timestamp, "x-slack-signature": slackSignature(SLACK_SIGNING_SECRET, timestamp, body) },
      body,
    });
    expect(response.status).toBe(200);
    const accepted = (await response.json()) as any;
    expect((await runOf(accepted.runId)).status).toBe("ok");
    await env.slack.waitFor(() => [...env.slack.messages.values()].some((m) => m.channel === "D9" && m.text === "Bytes answered."), 60_000, "the reply");
  });

  it("refuses a bad signature and a stale timestamp (401)", async () => {
    const envelope = { type: "event_callback", event_id: "Ev9", event: { type: "app_mention", user: "U1", text: "x", channel: "C1", ts: "1.2" } };
    expect((await postSlack(env.stack, envelope, { secret: "wrong" })).status).toBe(401);
    expect((await postSlack(env.stack, envelope, { timestamp: Math.floor(Date.now() / 1000) - 600 })).status).toBe(401);
  });
});
