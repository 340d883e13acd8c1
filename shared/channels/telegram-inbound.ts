import * as z from "zod";
import type { TelegramAccount } from "../config/channels-config";
import { telegramSessionKey } from "../core/channel-session-keys";
import { ignore, type Normalized } from "./inbound";

const UserSchema = z.lazy(() => z.object({ id: z.number(), is_bot: z.boolean().optional(), username: z.string().optional() }).loose());
const EntitySchema = z.lazy(() => z.object({ type: z.string(), offset: z.number(), length: z.number() }).loose());
const MessageSchema = z.lazy(() => z
  .object({
    message_id: z.number().int(),
    from: UserSchema.optional(),
    chat: z.object({ id: z.number(), type: z.string() }).loose(),
    text: z.string().optional(),
    entities: z.array(EntitySchema).optional(),
    message_thread_id: z.number().int().optional(),
    is_topic_message: z.boolean().optional(),
  })
  .loose());

/** A Telegram Bot API Update; only `message` carries something to answer (others are ignored). */
export const TelegramUpdateSchema = z.lazy(() => z.object({ update_id: z.number().int(), message: MessageSchema.optional() }).loose());
export type TelegramUpdate = z.infer<typeof TelegramUpdateSchema>;

export function normalizeTelegram(accountId: string, account: TelegramAccount, update: TelegramUpdate): Normalized {
  const message = update.message;
  if (!message) return ignore("unsupported update type");
  if (!message.from || message.from.is_bot) return ignore("message from a bot");
  if (!message.text || message.text.trim() === "") return ignore("message without text");
  const direct = message.chat.type === "private";
  if (!direct && account.groupPolicy === "mention" && !mentionsBot(message, account.botUsername)) return ignore("group message without a mention");
  const chatId = String(message.chat.id);
  const topicId = message.is_topic_message ? message.message_thread_id : undefined;
  const sessionKey = telegramSessionKey({ chatType: direct ? "direct" : "group", userId: String(message.from.id), chatId, topicId });
  return {
    kind: "message",
    message: {
      channel: "telegram",
      accountId,
      deliveryId: `telegram:${accountId}:update:${update.update_id}`,
      messageKey: `telegram:${accountId}:${chatId}:${message.message_id}`,
      senderId: String(message.from.id),
      text: message.text,
      chatType: direct ? "direct" : "group",
      sessionKey,
      target: {
        kind: "telegram",
        accountId,
        chatId,
        ...(topicId !== undefined ? { threadId: topicId } : {}),
        ...(direct ? {} : { replyToMessageId: message.message_id }),
      },
    },
  };
}

function mentionsBot(message: z.infer<typeof MessageSchema>, botUsername: string | undefined): boolean {
  if (!botUsername) return false;
  const wanted = `@${botUsername}`.toLowerCase();
  return (message.entities ?? []).some(
    (entity) => entity.type === "mention" && message.text!.slice(entity.offset, entity.offset + entity.length).toLowerCase() === wanted,
  );
}
