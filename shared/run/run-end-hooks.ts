import type { RunRecord } from "../aws/runs";
import { readEntries } from "../aws/transcript";
import type { ReplyPayload } from "../core/reply";
import { modelHistory } from "../core/session-view";
import type { HookRegistry } from "../hooks/registry";
import { runMessageSending, runObservers } from "../hooks/runners";
import type { AgentEndMeta } from "../hooks/types";
import type { RunDeps } from "./deps";
import { runHooks } from "./run-hooks";

/** How long agent_end handlers get (OpenClaw's budget for it, reference §J). */
export const AGENT_END_TIMEOUT_MS = 30_000;

export interface OutboundReply {
  payloads: ReplyPayload[];
  /** The reply text as sent (after message_sending), when there was one and it was not cancelled. */
  sentText?: string;
}

/**
 * message_sending over the run's reply (its non-error payloads, joined): a
 * handler may rewrite the text, or cancel the reply (`cancel: true` is
 * terminal; the run still ends, with no reply payload). Error payloads are
 * not offered: they are the runner's own text. Streamed deltas went out already.
 */
export async function outboundReply(deps: RunDeps, run: RunRecord, payloads: ReplyPayload[]): Promise<OutboundReply> {
  const hooks = runHooks(deps);
  const replies = payloads.filter((payload) => !payload.isError);
  if (replies.length === 0) return { payloads };
  // A channel reply has the hooks on each platform message it sends (shared/channels/outbound-hooks.ts), not here too.
  if (run.channelTarget) return { payloads };
  const text = replies.map((payload) => payload.text).join("\n\n");
  if (!hooks.has("message_sending")) return { payloads, sentText: text };
  const decision = await runMessageSending(hooks, { runId: run.runId, sessionKey: run.sessionKey, text, channel: run.source });
  const errors = payloads.filter((payload) => payload.isError);
  if (decision.cancelled) {
    deps.log.info("reply cancelled by message_sending", { runId: run.runId, by: decision.cancelledBy });
    return { payloads: errors };
  }
  return { payloads: [{ text: decision.text }, ...errors], sentText: decision.text };
}

export interface RunEnd {
  status: string;
  finalText: string;
  sentText?: string;
  meta: AgentEndMeta;
}

/** After the run ended and its reply went out: message_sent (when a reply was sent), then agent_end, once per run. */
export async function runEndHooks(deps: RunDeps, run: RunRecord, end: RunEnd): Promise<void> {
  const hooks = runHooks(deps);
  const ref = { runId: run.runId, sessionKey: run.sessionKey };
  if (end.sentText !== undefined) await runObservers(hooks, "message_sent", { ...ref, text: end.sentText, channel: run.source });
  if (!hooks.has("agent_end")) return;
  const messages = await sessionMessages(deps, hooks, run);
  await runObservers(hooks, "agent_end", { ...ref, messages, outcome: end.status, finalText: end.finalText, meta: end.meta }, AGENT_END_TIMEOUT_MS);
}

/** The session's transcript as the model would see it next; none when it cannot be read (agent_end must not fail the run). */
async function sessionMessages(deps: RunDeps, hooks: HookRegistry, run: RunRecord) {
  try {
    return modelHistory(await readEntries(deps.db, run.sessionId));
  } catch (error) {
    hooks.reportError("agent_end", "run-end", error);
    return [];
  }
}
