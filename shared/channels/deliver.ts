import { getRun, TERMINAL_STATUSES, type RunRecord } from "../aws/runs";
import type { Db } from "../aws/dynamo";
import type { ChannelsConfig } from "../config/channels-config";
import type { ChannelTarget } from "../core/channel-target";
import { splitMessage } from "../core/split-message";
import type { HookRegistry } from "../hooks/registry";
import { runMessageSending, runObservers } from "../hooks/runners";
import type { Log } from "../ports/run-deps";
import { claimPart, closeLedger, openLedger, recordPart, type DeliveryLedger } from "./ledger";
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

/**
 * Delivers an ended run's reply to the channel it came from, exactly once
 * (the ledger, shared/channels/ledger.ts). Called by run-finalize after the
 * run's terminal state is written and its lane handed on, so a slow or down
 * platform never holds the session. Safe to call again (retries, a second
 * finalize): what was sent is not sent again.
 */
export async function deliverChannelReply(deps: DeliverDeps, runId: string, known?: RunRecord): Promise<void> {
  // `known`: the ended record the caller just wrote, no second read.
  const run = known ?? await getRun(deps.db, runId);
  if (!run?.channelTarget || !TERMINAL_STATUSES.has(run.status)) return;
  const ledger = await openLedger(deps.db, runId);
  if (ledger.done) return;
  const text = replyText(run);
  if (run.channelTarget.kind === "hook") {
    await deliverHookReply(deps, run, run.channelTarget, text);
    return;
  }
  const messenger = messengerOrNone(deps, run);
  if (!messenger) {
    await closeLedger(deps.db, runId, "unknown_account");
    return;
  }
  if (text === "") {
    // NO_REPLY (or nothing renderable): nothing to show; a preview an attempt streamed is removed.
    const preview = ledger.parts["0"];
    if (preview?.state === "sent" && preview.messageId) await withRetry(() => messenger.remove(preview.messageId!), deps.retry ?? DEFAULT_RETRY);
    await closeLedger(deps.db, runId, "silent");
    return;
  }
  await deliverParts(deps, run, messenger, ledger, splitMessage(text, messenger.limit));
  await closeLedger(deps.db, runId, "delivered");
}

/** An account removed from the configuration since the message came in: log it, never fail the finalize. */
function messengerOrNone(deps: DeliverDeps, run: RunRecord): Messenger | undefined {
  try {
    return messengerFor(deps.channels, run.channelTarget!);
  } catch (error) {
    if (!(error instanceof UnknownChannelAccountError)) throw error;
    deps.log.error("channel reply not delivered", { runId: run.runId, error: error.message });
    return undefined;
  }
}

/** The reply as the user sees it: the shaped payloads (NO_REPLY already filtered), one after the other. */
export function replyText(run: RunRecord): string {
  const payloads = run.result?.payloads ?? [];
  return payloads.map((payload) => payload.text).filter((text) => text.trim() !== "").join("\n\n");
}

async function deliverParts(deps: DeliverDeps, run: RunRecord, messenger: Messenger, ledger: DeliveryLedger, parts: string[]): Promise<void> {
  const ref = { runId: run.runId, sessionKey: run.sessionKey, channel: run.channelTarget?.kind ?? "webhook" };
  for (const [index, part] of parts.entries()) {
    const existing = ledger.parts[String(index)];
    if (existing?.state === "sent" && existing.messageId) {
      if (existing.text === part) continue;
      // A streamed preview: finish it with an edit (repeatable, unlike a send).
      const edited = await withRetry(() => messenger.edit(existing.messageId!, part), deps.retry ?? DEFAULT_RETRY);
      if (edited.ok) await recordPart(deps.db, run.runId, index, { ...existing, text: part });
      else deps.log.warn("channel final edit failed", { runId: run.runId, error: edited.error });
      continue;
    }
    if (existing) continue;
    const decision = deps.hooks ? await runMessageSending(deps.hooks, { ...ref, text: part }) : { text: part, cancelled: false };
    if (!(await claimPart(deps.db, run.runId, index))) continue;
    if (decision.cancelled) {
      await recordPart(deps.db, run.runId, index, { state: "cancelled" });
      return; // cancel is terminal: nothing after it goes out either
    }
    const sent = await withRetry(() => messenger.send(decision.text), deps.retry ?? DEFAULT_RETRY);
    if (!sent.ok) {
      deps.log.error("channel send failed", { runId: run.runId, part: index, error: sent.error });
      await recordPart(deps.db, run.runId, index, { state: "failed", error: sent.error });
      return;
    }
    await recordPart(deps.db, run.runId, index, { state: "sent", messageId: sent.data.messageId, text: decision.text });
    if (deps.hooks) await runObservers(deps.hooks, "message_sent", { ...ref, text: decision.text });
  }
}

export type { ChannelTarget };
