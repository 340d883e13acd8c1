import type { ChannelTarget } from "../core/channel-target";

/**
 * One inbound message, whatever platform it came from (issue 13 "Inbound" 2):
 * who sent it, what it says, where to answer, and the two keys that make it
 * happen once — the platform's delivery id and the logical message id.
 */
export interface InboundMessage {
  channel: "telegram" | "slack" | "hook";
  accountId: string;
  /** Telegram update_id, Slack event_id, webhook-id: one per delivery attempt of the platform. */
  deliveryId: string;
  /** One per message the user wrote (Slack sends `message` and `app_mention` for one post): the run's idempotency key. */
  messageKey: string;
  senderId: string;
  text: string;
  chatType: "direct" | "group" | "channel";
  sessionKey: string;
  target: ChannelTarget;
}

/** What normalization decided: a message to run, or a reason to answer 200 and do nothing. */
export type Normalized = { kind: "message"; message: InboundMessage } | { kind: "ignore"; reason: string };

export const ignore = (reason: string): Normalized => ({ kind: "ignore", reason });
