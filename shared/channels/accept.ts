import type { HookRegistry } from "../hooks/registry";
import { runObservers } from "../hooks/runners";
import { acceptRun, type IntakeDeps } from "../intake/intake";
import type { InboundMessage } from "./inbound";
import { markSeen, wasSeen } from "./seen";

export interface InboundAnswer {
  runId: string;
  sessionKey: string;
  /** A redelivery (same delivery id) or the same message again (Slack's second event): nothing new started. */
  duplicate: boolean;
}

/**
 * Verified, normalized message -> the normal intake (lanes, queue modes of
 * `lanes.byChannel.<channel>`), never the agent itself. Order matters for
 * "nothing accepted is lost, nothing runs twice": the run is accepted under
 * the logical message key first (idempotent: same key, same run id), the
 * delivery id is marked seen after; a crash in between makes the platform's
 * redelivery accept again, which finds the same run.
 */
export async function acceptInbound(deps: IntakeDeps & { hooks?: HookRegistry }, message: InboundMessage): Promise<InboundAnswer> {
  const seenRun = await wasSeen(deps.db, message.deliveryId);
  if (seenRun) return { runId: seenRun, sessionKey: message.sessionKey, duplicate: true };
  const accepted = await acceptRun(
    deps,
    {
      sessionKey: message.sessionKey,
      message: message.text,
      idempotencyKey: message.messageKey,
      channel: message.channel,
      // A person wrote to the bot: user priority. A generic hook keeps the webhook trigger.
      ...(message.channel === "hook" ? {} : { trigger: "user" as const }),
    },
    "webhook",
    { channelTarget: message.target },
  );
  await markSeen(deps.db, message.deliveryId, accepted.runId);
  if (!accepted.duplicate && deps.hooks) {
    await runObservers(deps.hooks, "message_received", { runId: accepted.runId, sessionKey: message.sessionKey, text: message.text, channel: message.channel }, 2000);
  }
  return { runId: accepted.runId, sessionKey: accepted.sessionKey, duplicate: accepted.duplicate };
}
