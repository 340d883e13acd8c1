import * as z from "zod";
import type { SlackAccount } from "../config/channels-config";
import { slackSessionKey } from "../core/channel-session-keys";
import { ignore, type Normalized } from "./inbound";

const EventSchema = z.lazy(() => z
  .object({
    type: z.string(),
    subtype: z.string().optional(),
    user: z.string().optional(),
    bot_id: z.string().optional(),
    text: z.string().optional(),
    channel: z.string().optional(),
    channel_type: z.string().optional(),
    ts: z.string().optional(),
    thread_ts: z.string().optional(),
  })
  .loose());

/** Slack Events API envelopes: the `url_verification` handshake and `event_callback`. */
export const SlackEnvelopeSchema = z.lazy(() => z.discriminatedUnion("type", [
  z.object({ type: z.literal("url_verification"), challenge: z.string() }).loose(),
  z.object({ type: z.literal("event_callback"), event_id: z.string(), event: EventSchema }).loose(),
  z.object({ type: z.literal("app_rate_limited") }).loose(),
]));
export type SlackEnvelope = z.infer<typeof SlackEnvelopeSchema>;

export function normalizeSlack(accountId: string, account: SlackAccount, envelope: Extract<SlackEnvelope, { type: "event_callback" }>): Normalized {
  const event = envelope.event;
  if (event.type !== "message" && event.type !== "app_mention") return ignore("unsupported event type");
  if (event.subtype) return ignore(`message subtype ${event.subtype}`);
  if (event.bot_id || !event.user) return ignore("message from a bot");
  if (account.botUserId && event.user === account.botUserId) return ignore("the bot's own message");
  if (!event.text || !event.channel || !event.ts) return ignore("message without text");
  const direct = event.channel_type === "im";
  const mentioned = event.type === "app_mention" || (account.botUserId !== undefined && event.text.includes(`<@${account.botUserId}>`));
  if (!direct && account.channelPolicy === "mention" && !mentioned) return ignore("channel message without a mention");
  // In a channel the reply threads under the message (or its thread root); a DM answers inline unless threaded.
  const threadTs = event.thread_ts ?? (direct ? undefined : event.ts);
  const sessionKey = slackSessionKey({ chatType: direct ? "direct" : "channel", userId: event.user, channelId: event.channel, threadTs: event.thread_ts });
  return {
    kind: "message",
    message: {
      channel: "slack",
      accountId,
      deliveryId: `slack:${accountId}:event:${envelope.event_id}`,
      // `message` and `app_mention` of one post share channel + ts: one run.
      messageKey: `slack:${accountId}:${event.channel}:${event.ts}`,
      senderId: event.user,
      text: event.text,
      chatType: direct ? "direct" : "channel",
      sessionKey,
      target: { kind: "slack", accountId, channel: event.channel, ...(threadTs ? { threadTs } : {}), ackTs: event.ts },
    },
  };
}
