import { getRun, TERMINAL_STATUSES, type RunRecord } from "../aws/runs";
import type { Db } from "../aws/dynamo";
import type { ChannelsConfig } from "../config/channels-config";
import type { ChannelTarget } from "../core/channel-target";
import { splitMessage } from "../core/split-message";
import type { HookRegistry } from "../hooks/registry";
import type { Log } from "../ports/run-deps";
import { claimPart, closeLedger, markClosing, openLedger, readLedger, reclaimFailedPart, reclaimUnknownPreview, recordPart, retryablePart, unknownPreviewPart, type DeliveryLedger, type LedgerPart } from "./ledger";
import { afterSend, beforeSend, type OutboundRef } from "./outbound-hooks";
import type { SendDecision } from "../hooks/runners";
import { messengerFor, UnknownChannelAccountError, type Messenger } from "./messenger";
import { DEFAULT_RETRY, withRetry, type RetryPolicy } from "./platform-call";
import { deliverHookReply } from "./hook-reply";

export interface DeliverDeps {
  db: Db;
  channels: ChannelsConfig;
  log: Log;
  hooks?: HookRegistry;
  retry?: RetryPolicy;
}

/** What delivery reads of an ended run (a refused message has no record: shared/channels/refused-notice.ts builds one). */
export type DeliverableRun = Pick<RunRecord, "runId" | "sessionKey" | "status" | "channelTarget" | "result">;

/**
 * `settled`: nothing more to send (delivered, silent, cancelled, or a send
 * whose outcome is unknown). `retry`: a send failed retryably (5xx, 429,
 * timeout) and was recorded `failed`; the ledger stays open, so a later call
 * (shared/channels/notice-retry.ts, a repeated finalize) tries that part again.
 */
export type DeliveryOutcome = "settled" | "retry";

/**
 * Delivers an ended run's reply to the channel it came from, exactly once
 * (the ledger, shared/channels/ledger.ts). Called by run-finalize after the
 * run's terminal state is written and its lane handed on, so a slow or down
 * platform never holds the session. Safe to call again (retries, a second
 * finalize): what was sent is not sent again; a part whose send failed
 * retryably is tried again.
 */
export async function deliverChannelReply(deps: DeliverDeps, runId: string, known?: DeliverableRun): Promise<DeliveryOutcome> {
  // `known`: the ended record the caller just wrote, no second read.
  const run = known ?? await getRun(deps.db, runId);
  if (!run?.channelTarget || !TERMINAL_STATUSES.has(run.status)) return "settled";
  const ledger = await openLedger(deps.db, runId);
  if (ledger.done) return "settled";
  const text = replyText(run);
  if (run.channelTarget.kind === "hook") return deliverHookReply(deps, run, run.channelTarget, text);
  const messenger = messengerOrNone(deps, run);
  if (!messenger) {
    await closeLedger(deps.db, runId, "unknown_account");
    return "settled";
  }
  if (text === "") {
    // NO_REPLY (or nothing renderable): nothing to show; a preview an attempt streamed is removed.
    const preview = ledger.parts["0"];
    if (preview) await markClosing(deps.db, runId, { remove: true });
    if (preview?.state === "sent" && preview.messageId) await withRetry(() => messenger.remove(preview.messageId!), deps.retry ?? DEFAULT_RETRY);
    await closeLedger(deps.db, runId, "silent");
    return "settled";
  }
  const outcome = await deliverParts(deps, run, messenger, ledger, splitMessage(text, messenger.limit));
  if (outcome === "delivered") await closeLedger(deps.db, runId, "delivered");
  return outcome === "retry" ? "retry" : "settled";
}

/** An account removed from the configuration since the message came in: log it, never fail the finalize. */
function messengerOrNone(deps: DeliverDeps, run: DeliverableRun): Messenger | undefined {
  try {
    const timeoutMs = deps.retry?.callTimeoutMs;
    return messengerFor(deps.channels, run.channelTarget!, timeoutMs !== undefined ? { timeoutMs } : {});
  } catch (error) {
    if (!(error instanceof UnknownChannelAccountError)) throw error;
    deps.log.error("channel reply not delivered", { runId: run.runId, error: error.message });
    return undefined;
  }
}

/** The reply as the user sees it: the shaped payloads (NO_REPLY already filtered), one after the other. */
export function replyText(run: Pick<RunRecord, "result">): string {
  const payloads = run.result?.payloads ?? [];
  return payloads.map((payload) => payload.text).filter((text) => text.trim() !== "").join("\n\n");
}

/**
 * Each message of the reply: message_sending may rewrite or cancel it (cancel
 * is terminal: a streamed preview is removed, nothing after it goes out),
 * message_sent follows what the platform accepted. A retryable failure
 * stops the reply there (`retry`): the next call resumes at that part.
 */
async function deliverParts(deps: DeliverDeps, run: DeliverableRun, messenger: Messenger, ledger: DeliveryLedger, parts: string[]): Promise<PartsOutcome> {
  const ref: OutboundRef = { runId: run.runId, sessionKey: run.sessionKey, channel: run.channelTarget?.kind ?? "webhook", hooks: deps.hooks };
  const retry = deps.retry ?? DEFAULT_RETRY;
  for (const [index, part] of parts.entries()) {
    const existing = ledger.parts[String(index)];
    const finishing = existing?.state === "sent" && existing.messageId !== undefined;
    const retrying = retryablePart(existing);
    if (existing && !finishing && !retrying && index !== 0) continue; // claimed before, outcome unknown: at most once
    const decision = await beforeSend(ref, part, { kind: "reply", ...(finishing ? { messageId: existing.messageId } : {}) });
    // Fences a preview still streaming from an attempt that outlived the run (ledger.ts, `closing`).
    if (index === 0) await markClosing(deps.db, run.runId, decision.cancelled ? { remove: true } : { text: decision.text });
    if (finishing) {
      if (!(await finishPreview(deps, run, messenger, ref, index, existing!, decision))) return "delivered";
      continue;
    }
    // The preview's first send has an unknown outcome (its Lambda died mid-send): the final text goes out as a new message.
    const takeOver = index === 0 && unknownPreviewPart(existing);
    if (existing && !retrying && !takeOver) continue;
    // A failed part is claimed again (failed -> sending): of two deliveries racing, one sends, and
    // the rest of the reply is that one's too (it closes the ledger; parts stay in order).
    if (!(await (retrying ? reclaimFailedPart : takeOver ? reclaimUnknownPreview : claimPart)(deps.db, run.runId, index))) {
      // The preview recorded (or released) its message after our read: finish what it left. Once:
      // no preview claims part 0 after `closing` (claimPreviewPart), so part 0 is no longer its claim.
      if (takeOver) return deliverParts(deps, run, messenger, (await readLedger(deps.db, run.runId))!, parts);
      return "contended";
    }
    if (decision.cancelled) {
      await recordPart(deps.db, run.runId, index, { state: "cancelled" });
      return "delivered"; // cancel is terminal: nothing after it goes out either
    }
    const sent = await withRetry(() => messenger.send(decision.text), retry);
    if (!sent.ok) {
      deps.log.error("channel send failed", { runId: run.runId, part: index, error: sent.error, retryable: sent.retryable });
      await recordPart(deps.db, run.runId, index, { state: "failed", error: sent.error, retryable: sent.retryable });
      return sent.retryable ? "retry" : "delivered";
    }
    await recordPart(deps.db, run.runId, index, { state: "sent", messageId: sent.data.messageId, text: decision.text });
    await afterSend(ref, decision.text, { kind: "reply", messageId: sent.data.messageId });
  }
  return "delivered";
}

/** `delivered`: this call settled the reply (close the ledger); `contended`: another delivery holds it. */
type PartsOutcome = "delivered" | "retry" | "contended";

/**
 * A message that already exists (the streamed preview) is finished with an
 * edit to exactly the final text (repeatable, unlike a send). False when
 * message_sending cancelled the reply: the preview is removed and nothing
 * more goes out.
 */
async function finishPreview(deps: DeliverDeps, run: DeliverableRun, messenger: Messenger, ref: OutboundRef, index: number, existing: LedgerPart, decision: SendDecision): Promise<boolean> {
  const messageId = existing.messageId!;
  const retry = deps.retry ?? DEFAULT_RETRY;
  if (decision.cancelled) {
    const removed = await withRetry(() => messenger.remove(messageId), retry);
    if (!removed.ok) deps.log.warn("cancelled reply's preview not removed", { runId: run.runId, error: removed.error });
    await recordPart(deps.db, run.runId, index, { state: "cancelled", messageId });
    return false;
  }
  if (existing.text === decision.text) return true;
  const edited = await withRetry(() => messenger.edit(messageId, decision.text), retry);
  if (!edited.ok) {
    deps.log.warn("channel final edit failed", { runId: run.runId, error: edited.error });
    return true;
  }
  await recordPart(deps.db, run.runId, index, { ...existing, text: decision.text });
  await afterSend(ref, decision.text, { kind: "reply", messageId });
  return true;
}

export type { ChannelTarget };
