/**
 * Channel replies beyond the plain answer (issue 13), through the deployed
 * local stack against the fake Telegram Bot API:
 *  - the built-in `message` tool sends mid-run, once, and a final answer that
 *    repeats it is not sent again (seed 001 messaging-tool dedupe);
 *  - a `verbose` account gets the inline tool summaries;
 *  - message_sending / message_sent run on the preview's sends and edits and
 *    on the final text; a rewrite reaches the chat, a cancel sends nothing;
 *  - a run the sweeper ends (its execution stopped) still answers the chat
 *    with the clear error, exactly once;
 *  - `npm run channels -- telegram set-webhook` registers the webhook, and an
 *    update Telegram delivers to it is answered;
 *  - OpenClaw's chat surface on the WebSocket (a `sessions.subscribe`d
 *    watcher) ends with the text the chat shows: verbose summaries, the
 *    messaging-tool dedupe, a streamed answer.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { SFNClient, StopExecutionCommand } from "@aws-sdk/client-sfn";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { fileURLToPath } from "node:url";
import { getRun } from "../../shared/aws/runs";
import { readLedger } from "../../shared/channels/ledger";
import { chat } from "../support/fake-openai-server";
import { FAKE_TELEGRAM_TOKEN } from "../support/fake-telegram-server";
import { HookRecorder } from "../support/hook-recorder";
import { cliConnect } from "../support/openclaw-frames";
import { TestWsClient, type Frame } from "../support/ws-client";
import { postTelegram, startChannelStack, stopChannelStack, TELEGRAM_SECRET, telegramUpdate, type ChannelStack } from "../support/channel-stack";

const CHANNEL_OUTBOUND = fileURLToPath(new URL("../fixtures/plugins/channel-outbound.ts", import.meta.url));
const ROOT = fileURLToPath(new URL("../..", import.meta.url));

let env: ChannelStack;
let recorder: HookRecorder;
// A loaded shared machine: wait for conditions, generously, never for time.
vi.setConfig({ testTimeout: 300_000 });

beforeAll(async () => {
  recorder = await HookRecorder.start();
  env = await startChannelStack({
    moreAccounts: true,
    plugins: [recorder.plugin(["message_received", "message_sending", "message_sent"]), { path: CHANNEL_OUTBOUND, config: {} }],
  });
}, 180_000);
afterAll(async () => {
  await stopChannelStack(env ?? {});
  await recorder?.close();
});

/** The run's end (each wait answers within 20 s; `status: "timeout"` there means "not yet" unless the run ended). */
async function ended(runId: string): Promise<NonNullable<Awaited<ReturnType<typeof getRun>>>> {
  for (let i = 0; i < 30; i++) {
    await fetch(`${env.stack.restUrl}/v1/runs/${runId}/wait`, {
      method: "POST",
      headers: { authorization: `Bearer ${env.stack.authToken}`, "content-type": "application/json" },
      body: JSON.stringify({ timeoutMs: 20_000 }),
    });
    const run = await getRun(env.stack.deps.db, runId);
    if (run && ["ok", "error", "timeout", "aborted"].includes(run.status)) return run;
  }
  throw new Error(`run ${runId} did not end`);
}

function sends(chatId: string, text?: string) {
  return env.telegram.method("sendMessage").filter((c) => c.body.chat_id === chatId && (text === undefined || c.body.text === text));
}

function callsTo(chatId: string) {
  return env.telegram.calls.filter((c) => c.body.chat_id === chatId);
}

describe("the message tool", () => {
  it("sends mid-run once; a final answer repeating it is not sent again", async () => {
    const note = "Working on it: the report is ready, revenue up 12%.";
    env.oai.enqueue(chat.toolCall("message", { text: note }), chat.text("The report is ready, revenue up 12%."));
    const accepted = await postTelegram(env.stack, telegramUpdate("make the report", { id: 601, type: "private" }, { id: 601 }));
    const run = await ended(accepted.body.runId);
    expect(run.status).toBe("ok");
    expect(run.result?.payloads).toEqual([]);
    await env.stack.idle();
    // A preview of the duplicate answer may have been streamed; it was removed.
    await env.telegram.waitFor(() => env.telegram.messagesIn("601").length === 1, 60_000, "the duplicate preview removed");
    expect(env.telegram.messagesIn("601")).toEqual([note]);
    expect(sends("601", note)).toHaveLength(1);
    expect((await readLedger(env.stack.deps.db, run.runId))?.toolSends).toEqual([{ toolCallId: expect.any(String), messageIds: [expect.any(String)], text: note }]);
    // The typing indicator went out when the attempt started; message_received ran once, at intake, naming the platform.
    expect(env.telegram.method("sendChatAction").filter((c) => c.body.chat_id === "601").length).toBeGreaterThanOrEqual(1);
    expect(recorder.of("message_received", (e) => e.runId === run.runId)).toEqual([expect.objectContaining({ channel: "telegram", text: "make the report" })]);
  });

  it("is not sent again when the attempt after it fails and the run retries", async () => {
    const note = "Halfway there: step one of two is done.";
    env.oai.enqueue(
      chat.toolCall("message", { text: note }),
      chat.error(500, { error: { message: "The server had an error", type: "server_error", param: null, code: null } }),
      chat.text("All done: both steps finished."),
    );
    const accepted = await postTelegram(env.stack, telegramUpdate("two steps", { id: 602, type: "private" }, { id: 602 }));
    const run = await ended(accepted.body.runId);
    expect(run.status).toBe("ok");
    await env.telegram.waitFor(() => env.telegram.messagesIn("602").includes("All done: both steps finished."), 60_000, "the final answer");
    await env.stack.idle();
    expect(env.telegram.messagesIn("602")).toEqual([note, "All done: both steps finished."]);
    expect(sends("602", note)).toHaveLength(1);
  });
});

describe("verbose account", () => {
  it("shows the inline tool summary before the answer", async () => {
    env.oai.enqueue(chat.toolCall("calculator", { expression: "6*7" }), chat.text("The answer is 42."));
    const accepted = await postTelegram(env.stack, telegramUpdate("6 times 7?", { id: 611, type: "private" }, { id: 611 }), TELEGRAM_SECRET, "verbose");
    const run = await ended(accepted.body.runId);
    expect(run.result?.payloads).toEqual([{ text: "🛠️ calculator", toolSummary: true }, { text: "The answer is 42." }]);
    await env.telegram.waitFor(() => env.telegram.messagesIn("611")[0] === "🛠️ calculator\n\nThe answer is 42.", 60_000, "the verbose reply");
    await env.stack.idle();
    expect(env.telegram.messagesIn("611")).toEqual(["🛠️ calculator\n\nThe answer is 42."]);
  });

  it("a non-verbose account shows the answer alone", async () => {
    env.oai.enqueue(chat.toolCall("calculator", { expression: "6*7" }), chat.text("It is 42."));
    const accepted = await postTelegram(env.stack, telegramUpdate("6 times 7?", { id: 612, type: "private" }, { id: 612 }));
    await ended(accepted.body.runId);
    await env.telegram.waitFor(() => env.telegram.messagesIn("612")[0] === "It is 42.", 60_000, "the reply");
  });
});

describe("message_sending / message_sent on channel messages", () => {
  it("run on the preview's send and edits and on the final text; a rewrite reaches every message", async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const answer = "Your code is secret-code and the rest of the answer follows after it.";
    env.oai.enqueue({ ...chat.text(answer), hold: { afterFrames: 6, until: held } } as never);
    const accepted = await postTelegram(env.stack, telegramUpdate("what is my code", { id: 621, type: "private" }, { id: 621 }));
    const runId = accepted.body.runId as string;
    // The preview went out while the answer was held mid-stream.
    await env.telegram.waitFor(() => sends("621").length === 1, 120_000, "the preview");
    release();
    const run = await ended(runId);
    expect(run.status).toBe("ok");
    const final = "Your code is [redacted] and the rest of the answer follows after it.";
    await env.telegram.waitFor(() => env.telegram.messagesIn("621")[0] === final, 60_000, "the rewritten final text");
    await env.stack.idle();
    expect(env.telegram.messagesIn("621")).toEqual([final]);
    for (const call of callsTo("621")) expect(String(call.body.text ?? "")).not.toContain("secret-code");
    const sending = recorder.of("message_sending", (e) => e.runId === runId);
    const sent = recorder.of("message_sent", (e) => e.runId === runId);
    expect(sending.filter((e) => e.kind === "preview").length).toBeGreaterThanOrEqual(1);
    expect(sending.filter((e) => e.kind === "reply")).toHaveLength(1);
    expect(sent.filter((e) => e.kind === "preview").length).toBeGreaterThanOrEqual(1);
    // One message_sent per platform call that changed the chat, each with the text it shows.
    expect(sent.length).toBe(callsTo("621").filter((c) => /sendMessage|editMessageText/.test(c.path)).length);
    for (const event of sent) expect(event).toMatchObject({ channel: "telegram", messageId: expect.any(String), text: expect.not.stringContaining("secret-code") });
    // No run-level message_sent for a channel reply: the platform messages carry it.
    expect(sent.every((e) => e.kind !== undefined)).toBe(true);
  });

  it("a cancel sends nothing to the chat", async () => {
    env.oai.enqueue(chat.text("CANCEL-REPLY this answer must never be shown."));
    const accepted = await postTelegram(env.stack, telegramUpdate("say it", { id: 622, type: "private" }, { id: 622 }));
    const run = await ended(accepted.body.runId);
    expect(run.status).toBe("ok");
    await env.stack.idle();
    expect(callsTo("622").filter((c) => !c.path.endsWith("/sendChatAction"))).toEqual([]);
    expect(recorder.of("message_sent", (e) => e.runId === run.runId)).toEqual([]);
    expect(recorder.of("message_sending", (e) => e.runId === run.runId).length).toBeGreaterThanOrEqual(1);
  });
});

describe("a run the sweeper ends", () => {
  it("answers the chat with the clear error, once, replacing the streamed preview", async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    env.oai.enqueue({ ...chat.text("A partial answer that never finishes because the execution is stopped."), hold: { afterFrames: 4, until: held } } as never);
    const accepted = await postTelegram(env.stack, telegramUpdate("long job", { id: 631, type: "private" }, { id: 631 }));
    const runId = accepted.body.runId as string;
    await env.telegram.waitFor(() => sends("631").length === 1, 120_000, "the preview");
    // Part 0 is recorded before the run is stopped, so the final delivery finds the preview to finish.
    for (let i = 0; (await readLedger(env.stack.deps.db, runId))?.parts["0"]?.state !== "sent"; i++) {
      if (i > 600) throw new Error("the preview was never recorded");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const { region, credentials } = env.stack.deps.runtime;
    const sfn = new SFNClient({ endpoint: env.stack.endpoints.stepFunctions, region, ...(credentials ? { credentials } : {}) });
    const executionArn = (await getRun(env.stack.deps.db, runId))!.executionArn!;
    await sfn.send(new StopExecutionCommand({ executionArn, error: "Operator", cause: "stopped from the console" }));
    const run = await ended(runId);
    expect(run.status).toBe("aborted");
    expect(run.error).toContain("ABORTED");
    await env.telegram.waitFor(() => env.telegram.messagesIn("631")[0] === run.error, 120_000, "the error reply");
    // The stopped execution's attempt Lambda is still running: let it stream on. The ledger's closing
    // fence keeps it from overwriting the error reply (test/channels/delivery-ledger.test.ts has the interleavings).
    release();
    await env.stack.sweepNow();
    await env.stack.idle();
    expect(env.telegram.messagesIn("631")).toEqual([run.error]);
    expect(sends("631")).toHaveLength(1);
    expect(env.telegram.method("editMessageText").filter((c) => c.body.chat_id === "631").at(-1)?.body.text).toBe(run.error);
    expect((await readLedger(env.stack.deps.db, runId))?.done).toBe(true);
  });
});

describe("the WebSocket chat surface of a channel conversation", () => {
  /** A read-only OpenClaw client subscribed to the sessions; its `chat` frames are what a UI shows. */
  async function watcher(sessionKeys: string[]): Promise<TestWsClient> {
    const client = await TestWsClient.open(env.stack.webSocketUrl);
    await client.waitFor((f) => f.type === "event", 60_000);
    const connect = cliConnect(env.stack.authToken, ["operator.read"]);
    client.sendRaw(JSON.stringify(connect));
    await client.waitFor((f) => f.type === "res" && f.id === connect.id);
    for (const sessionKey of sessionKeys) expect((await client.request("sessions.subscribe", { sessionKey })).ok).toBe(true);
    return client;
  }
  const finalOf = (client: TestWsClient, runId: string) => client.waitFor((f: Frame) => f.event === "chat" && f.payload?.runId === runId && f.payload?.state === "final");
  const finalText = (frame: Frame) => (frame.payload.message.content as { text: string }[]).map((c) => c.text).join("");

  it("ends with what the chat shows: verbose summaries, the messaging-tool dedupe, a streamed answer", async () => {
    const client = await watcher(["agent:main:telegram:direct:651", "agent:main:telegram:direct:652", "agent:main:telegram:direct:653"]);
    try {
      env.oai.enqueue(chat.toolCall("calculator", { expression: "6*7" }), chat.text("The answer is 42."));
      const verbose = await postTelegram(env.stack, telegramUpdate("6 times 7?", { id: 651, type: "private" }, { id: 651 }), TELEGRAM_SECRET, "verbose");
      const verboseFinal = await finalOf(client, verbose.body.runId);
      await env.telegram.waitFor(() => env.telegram.messagesIn("651")[0] === "🛠️ calculator\n\nThe answer is 42.", 120_000, "the verbose reply");
      expect(finalText(verboseFinal)).toBe(env.telegram.messagesIn("651")[0]);

      const note = "Sent already: the numbers are in, all green.";
      env.oai.enqueue(chat.toolCall("message", { text: note }), chat.text("The numbers are in, all green."));
      const deduped = await postTelegram(env.stack, telegramUpdate("numbers?", { id: 652, type: "private" }, { id: 652 }));
      const dedupedFinal = await finalOf(client, deduped.body.runId);
      await ended(deduped.body.runId);
      await env.telegram.waitFor(() => env.telegram.messagesIn("652").length === 1, 120_000, "the duplicate preview removed");
      // The chat shows the tool's message only; the final reply (nothing more) is what the surface ends with.
      expect(env.telegram.messagesIn("652")).toEqual([note]);
      expect(finalText(dedupedFinal)).toBe("");

      const answer = "A streamed answer, in several words, that the chat and the surface both end with.";
      env.oai.enqueue(chat.text(answer));
      const streamed = await postTelegram(env.stack, telegramUpdate("stream it", { id: 653, type: "private" }, { id: 653 }));
      const streamedFinal = await finalOf(client, streamed.body.runId);
      await env.telegram.waitFor(() => env.telegram.messagesIn("653")[0] === answer, 120_000, "the streamed reply");
      expect(finalText(streamedFinal)).toBe(env.telegram.messagesIn("653")[0]);
      const deltas = client.frames.filter((f) => f.event === "chat" && f.payload?.runId === streamed.body.runId && f.payload?.state === "delta");
      expect(deltas.length).toBeGreaterThanOrEqual(1);
      expect(answer.startsWith(String(deltas.at(-1)!.payload.message.content[0].text))).toBe(true);
    } finally {
      await client.close();
    }
  });
});

describe("npm run channels", () => {
  it("telegram set-webhook registers the stack's endpoint with the secret; an update Telegram delivers there is answered", async () => {
    const cli = await promisify(execFile)(`${ROOT}node_modules/.bin/tsx`, ["scripts/channels.ts", "telegram", "set-webhook", "default", env.stack.restUrl], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        TELEGRAM_BOT_TOKEN: FAKE_TELEGRAM_TOKEN,
        TELEGRAM_WEBHOOK_SECRET: TELEGRAM_SECRET,
        TELEGRAM_API_BASE_URL: env.telegram.baseUrl,
      },
    });
    const url = `${env.stack.restUrl}/v1/channels/telegram/default`;
    expect(cli.stdout).toContain(url);
    expect(env.telegram.webhook).toEqual({ url, secretToken: TELEGRAM_SECRET });
    expect(env.telegram.method("setWebhook").at(-1)?.body).toMatchObject({ url, secret_token: TELEGRAM_SECRET, allowed_updates: ["message"] });
    env.oai.enqueue(chat.text("Connected and answering."));
    const delivered = await env.telegram.deliver(telegramUpdate("hello", { id: 641, type: "private" }, { id: 641 }));
    expect(delivered).toMatchObject({ status: 200, body: { ok: true, runId: expect.any(String) } });
    await env.telegram.waitFor(() => env.telegram.messagesIn("641")[0] === "Connected and answering.", 120_000, "the answer");
  });

  it("slack manifest prints the request URL; a missing argument is a usage error", async () => {
    const run = promisify(execFile);
    const tsx = `${ROOT}node_modules/.bin/tsx`;
    const manifest = await run(tsx, ["scripts/channels.ts", "slack", "manifest", "main", "https://bot.example.com/"], { cwd: ROOT, env: { PATH: process.env.PATH, HOME: process.env.HOME } });
    expect(JSON.parse(manifest.stdout).settings.event_subscriptions.request_url).toBe("https://bot.example.com/v1/channels/slack/main");
    await expect(run(tsx, ["scripts/channels.ts", "telegram", "set-webhook"], { cwd: ROOT, env: { PATH: process.env.PATH } })).rejects.toMatchObject({ code: 2 });
  });
});
