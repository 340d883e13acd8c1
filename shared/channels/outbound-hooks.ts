import type { HookRegistry } from "../hooks/registry";
import { runMessageSending, runObservers, type SendDecision } from "../hooks/runners";
import type { ChannelSend } from "../hooks/types";

/**
 * message_sending / message_sent around each platform message of a channel
 * reply: the streamed preview's first send and every edit, the final text,
 * further parts, the messaging tool's sends. `message_sending` may rewrite
 * the text or cancel (terminal for that reply); `message_sent` follows a
 * platform call that succeeded.
 */
export interface OutboundRef {
  runId: string;
  sessionKey: string;
  channel: string;
  hooks?: HookRegistry;
}

export async function beforeSend(ref: OutboundRef, text: string, send: ChannelSend): Promise<SendDecision> {
  if (!ref.hooks?.has("message_sending")) return { text, cancelled: false };
  return runMessageSending(ref.hooks, { runId: ref.runId, sessionKey: ref.sessionKey, channel: ref.channel, text, ...send });
}

export async function afterSend(ref: OutboundRef, text: string, send: ChannelSend): Promise<void> {
  if (!ref.hooks?.has("message_sent")) return;
  await runObservers(ref.hooks, "message_sent", { runId: ref.runId, sessionKey: ref.sessionKey, channel: ref.channel, text, ...send });
}
