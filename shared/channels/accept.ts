import { getRun } from "../aws/runs";
import { runIdForIdempotencyKey } from "../core/ids";
import { acceptRun, type IntakeDeps } from "../intake/intake";
import type { InboundMessage } from "./inbound";
import { claimDelivery } from "./seen";

export interface InboundAnswer {
  runId: string;
  sessionKey: string;
  /** A redelivery (same delivery id) or the same message again (Slack's second event): nothing new started. */
  duplicate: boolean;
}

/**
 * Verified, normalized message -> the normal intake (lanes, queue modes of
 * `lanes.byChannel.<channel>`), never the agent itself. "Nothing accepted is
 * lost, nothing runs twice": the delivery id is claimed for the run id the
 * logical message key gives (deterministic), then the run is accepted under
 * that key (idempotent). A redelivery finds the claim and the run: duplicate.
 * A claim whose run is missing (a crash in between) is accepted again.
 *
 * Only what must happen before the platform's 200 happens here: the typing
 * indicator / reaction is sent when the run's attempt starts, and
 * message_received runs once per run at its start (shared/run/run-start-hooks.ts).
 */
export async function acceptInbound(deps: IntakeDeps, message: InboundMessage): Promise<InboundAnswer> {
  const runId = runIdForIdempotencyKey(message.messageKey);
  if (!(await claimDelivery(deps.db, message.deliveryId, runId)) && (await getRun(deps.db, runId))) {
    return { runId, sessionKey: message.sessionKey, duplicate: true };
  }
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
  return { runId: accepted.runId, sessionKey: accepted.sessionKey, duplicate: accepted.duplicate };
}
