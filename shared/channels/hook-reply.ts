import type { ChannelTarget } from "../core/channel-target";
import { runMessageSending, runObservers } from "../hooks/runners";
import type { DeliverableRun, DeliverDeps, DeliveryOutcome } from "./deliver";
import { postJson } from "./http-post";
import { claimPart, closeLedger, readLedger, reclaimFailedPart, recordPart, retryablePart } from "./ledger";
import { DEFAULT_RETRY, failure, withRetry, type PlatformResult } from "./platform-call";
import { signStandardWebhook } from "./signatures";

/** The `webhook-id` of a run's reply: stable, so a receiver deduplicates a resend after a crash. */
export function hookReplyId(runId: string): string {
  return `msg_${runId}`;
}

/**
 * POSTs `{type:"agent.reply", runId, sessionKey, status, text, payloads}` to
 * the hook's `replyUrl`, signed (Standard Webhooks) with the hook's secret,
 * retried with backoff; delivered at most once: a 2xx closes the ledger. A
 * claim whose outcome is unknown (crash mid-send) is sent again with the
 * same webhook-id, which Standard Webhooks receivers deduplicate on; so is
 * one whose POST failed retryably (`retry`: the ledger stays open for it).
 */
export async function deliverHookReply(deps: DeliverDeps, run: DeliverableRun, target: Extract<ChannelTarget, { kind: "hook" }>, text: string): Promise<DeliveryOutcome> {
  if (!target.replyUrl || text === "") {
    await closeLedger(deps.db, run.runId, target.replyUrl ? "silent" : "no_reply_url");
    return "settled";
  }
  const secret = deps.channels.hooks[target.accountId]?.secret ?? "";
  const ref = { runId: run.runId, sessionKey: run.sessionKey, channel: "hook" };
  const decision = deps.hooks ? await runMessageSending(deps.hooks, { ...ref, text }) : { text, cancelled: false };
  if (!(await claimPart(deps.db, run.runId, 0)) && !(await claimedBefore(deps, run.runId))) return "settled";
  if (decision.cancelled) {
    await recordPart(deps.db, run.runId, 0, { state: "cancelled" });
    await closeLedger(deps.db, run.runId, "cancelled");
    return "settled";
  }
  const body = JSON.stringify({
    type: "agent.reply",
    runId: run.runId,
    sessionKey: run.sessionKey,
    status: run.status,
    text: decision.text,
    payloads: run.result?.payloads ?? [],
  });
  const post = async (): Promise<PlatformResult<void>> => {
    const headers = signStandardWebhook(secret, hookReplyId(run.runId), body, deps.db.now());
    const out = await postJson(target.replyUrl!, body, { headers, publicOnly: !deps.channels.allowPrivateReplyUrls, ...(deps.retry?.callTimeoutMs !== undefined ? { timeoutMs: deps.retry.callTimeoutMs } : {}) });
    if (out.status >= 200 && out.status < 300) return { ok: true, data: undefined };
    // A private replyUrl in AWS (the SSRF guard): final, not retried.
    if (out.refused) return { ok: false, retryable: false, error: out.error ?? "replyUrl refused" };
    return failure(out.status, out.error ?? `replyUrl answered ${out.status}`, out.retryAfterHeader ? Number(out.retryAfterHeader) : undefined);
  };
  const sent = await withRetry(post, deps.retry ?? DEFAULT_RETRY);
  if (!sent.ok) {
    deps.log.error("hook reply failed", { runId: run.runId, error: sent.error, retryable: sent.retryable });
    await recordPart(deps.db, run.runId, 0, { state: "failed", error: sent.error, retryable: sent.retryable });
    if (sent.retryable) return "retry";
    await closeLedger(deps.db, run.runId, "failed");
    return "settled";
  }
  await recordPart(deps.db, run.runId, 0, { state: "sent", messageId: hookReplyId(run.runId) });
  await closeLedger(deps.db, run.runId, "delivered");
  if (deps.hooks) await runObservers(deps.hooks, "message_sent", { ...ref, text: decision.text });
  return "settled";
}

/** Part 0 was claimed before: sent again when its outcome is unknown (a crash mid-send) or its POST failed retryably. */
async function claimedBefore(deps: DeliverDeps, runId: string): Promise<boolean> {
  const earlier = (await readLedger(deps.db, runId))?.parts["0"];
  if (earlier?.state === "sending") return true;
  return retryablePart(earlier) && (await reclaimFailedPart(deps.db, runId, 0));
}
