import { getRun } from "../aws/runs";
import { shapeReply } from "../core/reply";
import { sessionBusy } from "../intake/answer";
import type { AcceptedRun } from "../intake/intake";
import type { InboundMessage } from "./inbound";
import { deliverNotice, NOTICE_IN_REQUEST_RETRY, type UnstartedReplyDeps } from "./unstarted-reply";

/**
 * The ledger id of the notice for a message the intake refused before it had
 * a run record (queue mode `reject` while the session is busy, or a full
 * queue with drop `new`). Derived from the run id the message's logical key
 * gives, so a redelivered update, Slack's second event of the same post and
 * a retried request all find the same ledger: one notice. A separate id from
 * the run's own ledger: a redelivery that arrives once the session is free
 * is accepted and answered like any message (the platform redelivers only
 * what it believes was never received).
 */
export function refusedNoticeId(runId: string): string {
  return `refused_${runId}`;
}

/**
 * Answers the chat of a refused message once, with the text a REST or
 * WebSocket caller gets in its SESSION_BUSY error. Tried once inside the
 * webhook request; a retryable failure goes to the sweeper's retries
 * (shared/channels/notice-retry.ts). A message refused after its record was
 * written (the `drop: "new"` race in joinLane) was answered by the intake
 * already (answerUnstarted). Hooks answer their caller with 429 instead.
 * Best effort: never throws (the 200 must go out).
 */
export async function answerRefusedMessage(deps: UnstartedReplyDeps, message: InboundMessage, refused: AcceptedRun): Promise<void> {
  if (message.target.kind === "hook") return;
  try {
    if (await getRun(deps.db, refused.runId)) return;
    const text = sessionBusy(refused).message;
    const payloads = shapeReply({ status: "error", finalText: "", error: text, toolErrors: [] });
    const notice = {
      runId: refusedNoticeId(refused.runId),
      sessionKey: message.sessionKey,
      status: "error" as const,
      channelTarget: message.target,
      result: { payloads, meta: { reason: "refused", refusal: refused.reason ?? "busy" } },
    };
    await deliverNotice({ ...deps, retry: deps.retry ?? NOTICE_IN_REQUEST_RETRY }, notice);
  } catch (error) {
    deps.log?.warn("channel notice for a refused message not delivered", { runId: refused.runId, error: String(error) });
  }
}
