import { postJson } from "./http-post";
import { failure, type PlatformResult } from "./platform-call";

/** The Telegram Bot API calls the runner makes (https://core.telegram.org/bots/api). */
export interface TelegramApi {
  sendMessage(input: { chatId: string; text: string; threadId?: number; replyToMessageId?: number }): Promise<PlatformResult<{ messageId: number }>>;
  editMessageText(input: { chatId: string; messageId: number; text: string }): Promise<PlatformResult<void>>;
  deleteMessage(input: { chatId: string; messageId: number }): Promise<PlatformResult<void>>;
  sendChatAction(input: { chatId: string; threadId?: number }): Promise<PlatformResult<void>>;
  setWebhook(input: { url: string; secretToken: string }): Promise<PlatformResult<void>>;
}

/** Telegram's message limit, in characters. */
export const TELEGRAM_TEXT_LIMIT = 4096;

interface TelegramAnswer {
  ok: boolean;
  result?: unknown;
  error_code?: number;
  description?: string;
  parameters?: { retry_after?: number };
}

/** `timeoutMs`: of each call (http-post.ts's default when absent). */
export function createTelegramApi(baseUrl: string, botToken: string, timeoutMs?: number): TelegramApi {
  const call = async (method: string, params: Record<string, unknown>): Promise<PlatformResult<unknown>> => {
    const out = await postJson(`${baseUrl.replace(/\/$/, "")}/bot${botToken}/${method}`, JSON.stringify(params), timeoutMs !== undefined ? { timeoutMs } : {});
    let answer: TelegramAnswer | undefined;
    try {
      answer = JSON.parse(out.body) as TelegramAnswer;
    } catch {
      answer = undefined;
    }
    if (out.status === 200 && answer?.ok) return { ok: true, data: answer.result };
    return failure(out.status, `${method}: ${answer?.description ?? out.error ?? `HTTP ${out.status}`}`, answer?.parameters?.retry_after);
  };
  return {
    async sendMessage({ chatId, text, threadId, replyToMessageId }) {
      const out = await call("sendMessage", {
        chat_id: chatId,
        text,
        ...(threadId !== undefined ? { message_thread_id: threadId } : {}),
        ...(replyToMessageId !== undefined ? { reply_parameters: { message_id: replyToMessageId, allow_sending_without_reply: true } } : {}),
      });
      if (!out.ok) return out;
      return { ok: true, data: { messageId: Number((out.data as { message_id?: number }).message_id) } };
    },
    async editMessageText({ chatId, messageId, text }) {
      const out = await call("editMessageText", { chat_id: chatId, message_id: messageId, text });
      // Editing to the same text again (a retried final edit) is success: the message already says it.
      if (!out.ok && /message is not modified/i.test(out.error)) return { ok: true, data: undefined };
      return out.ok ? { ok: true, data: undefined } : out;
    },
    async deleteMessage({ chatId, messageId }) {
      const out = await call("deleteMessage", { chat_id: chatId, message_id: messageId });
      return out.ok ? { ok: true, data: undefined } : out;
    },
    async sendChatAction({ chatId, threadId }) {
      const out = await call("sendChatAction", { chat_id: chatId, action: "typing", ...(threadId !== undefined ? { message_thread_id: threadId } : {}) });
      return out.ok ? { ok: true, data: undefined } : out;
    },
    async setWebhook({ url, secretToken }) {
      const out = await call("setWebhook", { url, secret_token: secretToken, allowed_updates: ["message"] });
      return out.ok ? { ok: true, data: undefined } : out;
    },
  };
}
