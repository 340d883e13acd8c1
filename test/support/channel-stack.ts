import { randomBytes } from "node:crypto";
import type { FaultPlan } from "../../infra/local/faults";
import { startLocalStack, type LocalStack } from "../../infra/local/stack";
import { loadAgentConfig } from "../../shared/config/config";
import { slackSignature, signStandardWebhook } from "../../shared/channels/signatures";
import { FakeOpenAIServer } from "./fake-openai-server";
import { FakeSlackServer } from "./fake-slack-server";
import { FAKE_TELEGRAM_TOKEN, FakeTelegramServer } from "./fake-telegram-server";
import { RecordingServer } from "./recording-server";

export const TELEGRAM_SECRET = "tg-webhook-secret";
export const SLACK_SIGNING_SECRET = "slack-signing-secret";
export const HOOK_SECRET = `whsec_${randomBytes(24).toString("base64")}`;
export const BOT_USER_ID = "UBOT";

export interface ChannelStack {
  stack: LocalStack;
  oai: FakeOpenAIServer;
  telegram: FakeTelegramServer;
  slack: FakeSlackServer;
  /** A `replyUrl` receiver answering 200. */
  receiver: RecordingServer;
}

/**
 * The deployed local stack with `openai/gpt-4o` on the fake OpenAI server,
 * a Telegram account and a Slack account pointed at the fake platforms, and
 * the `default` hook; loopback reply URLs allowed (as `npm start` does).
 */
export interface ChannelStackOptions {
  editIntervalMs?: number;
  /** Plugins loaded into the functions (config `plugins`). */
  plugins?: { path: string; config: Record<string, unknown> }[];
  /** Also a Telegram account `verbose` (same bot, `verbose: true`) and a `default` one (the env-var id). */
  moreAccounts?: boolean;
  /** Queue settings per channel (config `lanes.byChannel`), e.g. a small cap to drop messages. */
  byChannel?: Record<string, Record<string, unknown>>;
  /** The local stack's fault-injection plan (infra/local/faults.ts), e.g. to kill a function between a send and its ledger write. */
  faults?: FaultPlan;
}

export async function startChannelStack(options: ChannelStackOptions = {}): Promise<ChannelStack> {
  const editIntervalMs = options.editIntervalMs ?? 0;
  const [oai, telegram, slack, receiver] = await Promise.all([
    FakeOpenAIServer.start(),
    FakeTelegramServer.start(),
    FakeSlackServer.start(),
    new RecordingServer(() => ({ status: 200, body: { ok: true } })).start(),
  ]);
  const base = loadAgentConfig({ OPENAI_API_KEY: "test", OPENAI_BASE_URL: oai.baseURL, MODEL: "openai/gpt-4o" });
  const account = { botToken: FAKE_TELEGRAM_TOKEN, webhookSecret: TELEGRAM_SECRET, apiBaseUrl: telegram.baseUrl, botUsername: "runner_bot", editIntervalMs };
  const more = options.moreAccounts ? { verbose: { ...account, verbose: true }, default: account } : {};
  const config = {
    ...base,
    ...(options.plugins ? { plugins: options.plugins } : {}),
    ...(options.byChannel ? { lanes: { ...base.lanes, byChannel: options.byChannel } } : {}),
    channels: {
      telegram: { accounts: { main: account, ...more } },
      slack: { accounts: { main: { signingSecret: SLACK_SIGNING_SECRET, botToken: "xoxb-test", apiBaseUrl: slack.baseUrl, botUserId: BOT_USER_ID, editIntervalMs } } },
      hooks: { default: { secret: HOOK_SECRET } },
      allowPrivateReplyUrls: true,
    },
  };
  return { oai, telegram, slack, receiver, stack: await startLocalStack({ config, ...(options.faults ? { faults: options.faults } : {}) }) };
}

export async function stopChannelStack(parts: Partial<ChannelStack>): Promise<void> {
  await parts.stack?.close();
  await Promise.all([parts.oai?.close(), parts.telegram?.close(), parts.slack?.close(), parts.receiver?.close()]);
}

export interface Posted {
  status: number;
  body: any;
  ms: number;
}

async function post(url: string, body: string, headers: Record<string, string>): Promise<Posted> {
  const started = performance.now();
  const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // keep the text
  }
  return { status: response.status, body: parsed, ms: performance.now() - started };
}

export function postTelegram(stack: LocalStack, update: unknown, secret = TELEGRAM_SECRET, accountId = "main"): Promise<Posted> {
  return post(`${stack.restUrl}/v1/channels/telegram/${accountId}`, JSON.stringify(update), { "x-telegram-bot-api-secret-token": secret });
}

export function postSlack(stack: LocalStack, envelope: unknown, options: { secret?: string; timestamp?: number } = {}): Promise<Posted> {
  const body = JSON.stringify(envelope);
  const timestamp = String(options.timestamp ?? Math.floor(Date.now() / 1000));
  const signature = slackSignature(options.secret ?? SLACK_SIGNING_SECRET, timestamp, Buffer.from(body));
  return post(`${stack.restUrl}/v1/channels/slack/main`, body, { "x-slack-request-timestamp": timestamp, "x-slack-signature": signature });
}

export function postHook(stack: LocalStack, payload: unknown, options: { id?: string; secret?: string; nowMs?: number; hookId?: string } = {}): Promise<Posted> {
  const body = JSON.stringify(payload);
  const headers = signStandardWebhook(options.secret ?? HOOK_SECRET, options.id ?? `msg_${randomBytes(6).toString("hex")}`, body, options.nowMs ?? Date.now());
  return post(`${stack.restUrl}/v1/hooks/${options.hookId ?? "default"}`, body, headers);
}

let updateId = 1000;
let messageId = 1;

/** A Telegram private-chat (or group) text message update, as the Bot API posts it. */
export function telegramUpdate(text: string, chat: { id: number; type: "private" | "group" | "supergroup" } = { id: 42, type: "private" }, from = { id: 42 }) {
  const entities = text.includes("@runner_bot") ? [{ type: "mention", offset: text.indexOf("@runner_bot"), length: "@runner_bot".length }] : undefined;
  return {
    update_id: updateId++,
    message: { message_id: messageId++, from: { id: from.id, is_bot: false, first_name: "Ada" }, chat, date: Math.floor(Date.now() / 1000), text, ...(entities ? { entities } : {}) },
  };
}
