import type { HookRegistry } from "../hooks/registry";
import { runObservers } from "../hooks/runners";
import { runIdForIdempotencyKey } from "../core/ids";
import { acceptRun, type IntakeDeps } from "../intake/intake";
import { sessionBusy } from "../intake/answer";
import type { ApiError } from "../protocol/errors";
import type { InboundMessage } from "./inbound";
import { answerRefusedMessage } from "./refused-notice";
import { claimDelivery } from "./seen";

export interface InboundAnswer {
  runId: string;
  sessionKey: string;
  /** A redelivery (same delivery id) or the same message again (Slack's second event): nothing new started. */
  duplicate: boolean;
  /** The session lane refused the message (queue mode reject, full queue with drop `new`): the SESSION_BUSY a REST caller gets. */
  refused?: ApiError;
}

/**
 * Verified, normalized message -> the normal intake (lanes, queue modes of
 * `lanes.byChannel.<channel>`), never the agent itself. "Nothing accepted is
 * lost, nothing runs twice": the delivery id is claimed for the run id the
 * logical message key gives (deterministic), then the run is accepted under
 * that key (idempotent), both at once. A redelivery finds the run: duplicate.
 * A claim whose run is missing (a crash in between) is accepted again.
 *
 * Only what must happen before the platform's 200 happens here: the typing
 * indicator / reaction is sent when the run's attempt starts. message_received
 * runs here, once per message (a message steered into a running run never
 * starts a run of its own), bounded so the 200 stays within a second; the
 * run start does not repeat it for a channel run (shared/run/run-start-hooks.ts).
 *
 * A message the lane refuses answers its chat with the refusal, once
 * (shared/channels/refused-notice.ts), tried once here before the 200.
 */
export const MESSAGE_RECEIVED_BUDGET_MS = 500;

export async function acceptInbound(deps: IntakeDeps & { hooks?: HookRegistry }, message: InboundMessage): Promise<InboundAnswer> {
  const runId = runIdForIdempotencyKey(message.messageKey);
  // The claim and the intake run side by side (one round trip less before the 200): the intake is
  // idempotent under the message key, so a redelivery that lost the claim finds its run there.
  const [, accepted] = await Promise.all([claimDelivery(deps.db, message.deliveryId, runId), accept(deps, message)]);
  if (!accepted.duplicate && deps.hooks?.has("message_received")) {
    const event = { runId: accepted.runId, sessionKey: message.sessionKey, text: message.text, channel: message.channel };
    await runObservers(deps.hooks, "message_received", event, MESSAGE_RECEIVED_BUDGET_MS);
  }
  if (accepted.status === "rejected") {
    await answerRefusedMessage(deps, message, accepted);
    return { runId: accepted.runId, sessionKey: accepted.sessionKey, duplicate: accepted.duplicate, refused: sessionBusy(accepted) };
  }
  return { runId: accepted.runId, sessionKey: accepted.sessionKey, duplicate: accepted.duplicate };
}

function accept(deps: IntakeDeps, message: InboundMessage) {
  return acceptRun(
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
}
