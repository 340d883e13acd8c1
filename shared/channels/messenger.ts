import type { ChannelsConfig } from "../config/channels-config";
import type { ChannelTarget } from "../core/channel-target";
import type { PlatformResult } from "./platform-call";
import { createSlackApi, SLACK_TEXT_LIMIT } from "./slack-api";
import { createTelegramApi, TELEGRAM_TEXT_LIMIT } from "./telegram-api";

/** A chat conversation the runner writes to: send a message, edit one it sent. */
export interface Messenger {
  limit: number;
  editIntervalMs: number;
  send(text: string): Promise<PlatformResult<{ messageId: string }>>;
  edit(messageId: string, text: string): Promise<PlatformResult<void>>;
  /** Deletes a message it sent (a streamed preview of a reply that turned out silent). */
  remove(messageId: string): Promise<PlatformResult<void>>;
  /** Typing indicator / reaction (the run started); best effort. */
  ack(): Promise<void>;
}

export class UnknownChannelAccountError extends Error {
  override readonly name = "UnknownChannelAccountError";
}

/** The messenger of a Telegram or Slack target; undefined for hooks (they answer by replyUrl). */
export function messengerFor(channels: ChannelsConfig, target: ChannelTarget, options: { timeoutMs?: number } = {}): Messenger | undefined {
  if (target.kind === "telegram") {
    const account = channels.telegram.accounts[target.accountId];
    if (!account) throw new UnknownChannelAccountError(`telegram account ${target.accountId} is not configured`);
    const api = createTelegramApi(account.apiBaseUrl, account.botToken, options.timeoutMs);
    return {
      limit: TELEGRAM_TEXT_LIMIT,
      editIntervalMs: account.editIntervalMs,
      send: async (text) => {
        const out = await api.sendMessage({ chatId: target.chatId, text, threadId: target.threadId, replyToMessageId: target.replyToMessageId });
        return out.ok ? { ok: true, data: { messageId: String(out.data.messageId) } } : out;
      },
      edit: (messageId, text) => api.editMessageText({ chatId: target.chatId, messageId: Number(messageId), text }),
      remove: (messageId) => api.deleteMessage({ chatId: target.chatId, messageId: Number(messageId) }),
      ack: async () => void (await api.sendChatAction({ chatId: target.chatId, threadId: target.threadId })),
    };
  }
  if (target.kind === "slack") {
    const account = channels.slack.accounts[target.accountId];
    if (!account) throw new UnknownChannelAccountError(`slack account ${target.accountId} is not configured`);
    const api = createSlackApi(account.apiBaseUrl, account.botToken, options.timeoutMs);
    return {
      limit: SLACK_TEXT_LIMIT,
      editIntervalMs: account.editIntervalMs,
      send: async (text) => {
        const out = await api.postMessage({ channel: target.channel, text, threadTs: target.threadTs });
        return out.ok ? { ok: true, data: { messageId: out.data.ts } } : out;
      },
      edit: (ts, text) => api.update({ channel: target.channel, ts, text }),
      remove: (ts) => api.deleteMessage({ channel: target.channel, ts }),
      ack: async () => {
        if (target.ackTs) await api.addReaction({ channel: target.channel, ts: target.ackTs, name: "eyes" });
      },
    };
  }
  return undefined;
}
