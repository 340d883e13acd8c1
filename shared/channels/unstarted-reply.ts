import { getRun, TERMINAL_STATUSES, type RunRecord } from "../aws/runs";
import type { Db } from "../aws/dynamo";
import type { ChannelsConfig } from "../config/channels-config";
import { shapeReply } from "../core/reply";
import type { HookRegistry } from "../hooks/registry";
import { silentLog, type Log } from "../ports/run-deps";
import { deliverChannelReply, type DeliverableRun } from "./deliver";
import { registerPendingNotice, type NoticeStatus } from "./notice-retry";
import type { RetryPolicy } from "./platform-call";

export interface UnstartedReplyDeps {
  db: Db;
  config: { channels: ChannelsConfig };
  log?: Log;
  hooks?: HookRegistry;
  /** The platform retry policy (default: deliver.ts's); the intake passes NOTICE_IN_REQUEST_RETRY. */
  retry?: RetryPolicy;
}

/**
 * Inside a webhook request (a message dropped by the intake of a newer one) the notice is
 * tried once, for at most 1.5 s (not the 10 s of a call outside a request): a platform that
 * is down, or hangs, must not hold the platform's 200 for the backoff or the timeout.
 * A retryable failure is recorded in the ledger (`failed`) and the notice is handed to the
 * sweeper's retries (shared/channels/notice-retry.ts); an abort retries as usual first.
 */
export const NOTICE_IN_REQUEST_RETRY: RetryPolicy = { attempts: 1, baseDelayMs: 0, maxDelayMs: 0, sleep: async () => undefined, callTimeoutMs: 1500 };

/** When an unstarted run carries no error text (it always should): still a notice, never silence. */
const GENERIC_NOTICE = "The message was not run.";

/**
 * A channel message that ended without ever running — dropped for the
 * session queue cap, refused because the queue was full, or aborted while it
 * waited — still answers its chat, once, with the clear notice its record
 * carries (`error`). No attempt shaped a reply for it, so the notice is
 * shaped here the way run-finalize shapes an error reply (shared/core/reply.ts)
 * and handed to the normal delivery with its exactly-once ledger: a repeat
 * (a retried intake or abort) sends nothing more.
 *
 * Best effort for the caller: the intake or abort that ended the run has
 * done its work already, so a delivery failure is logged, never thrown.
 */
export async function answerUnstartedChannelRun(deps: UnstartedReplyDeps, runId: string, known?: RunRecord): Promise<void> {
  try {
    const run = known ?? (await getRun(deps.db, runId));
    if (!run?.channelTarget || !TERMINAL_STATUSES.has(run.status) || !neverRan(run)) return;
    await deliverNotice(deps, withNotice(run));
  } catch (error) {
    deps.log?.warn("channel notice for an unstarted run not delivered", { runId, error: String(error) });
  }
}

/**
 * A notice (one error payload) to its chat through the normal delivery and
 * ledger; a retryable failure is registered for the sweeper's retries.
 * Throws what delivery throws (the callers log it).
 */
export async function deliverNotice(deps: UnstartedReplyDeps, notice: DeliverableRun & { status: NoticeStatus }): Promise<void> {
  const log = deps.log ?? silentLog;
  const retry = deps.retry ? { retry: deps.retry } : {};
  const outcome = await deliverChannelReply({ db: deps.db, channels: deps.config.channels, log, hooks: deps.hooks, ...retry }, notice.runId, notice);
  if (outcome === "retry") await registerPendingNotice(deps.db, notice);
}

/** Ended before any attempt: no start time, no shaped result (run-finalize writes one for every run it ends). */
function neverRan(run: RunRecord): boolean {
  return run.startedAt === undefined && run.result === undefined;
}

/** The record as delivery reads it: the notice as the run's one (error) payload. */
function withNotice(run: RunRecord): DeliverableRun & { status: NoticeStatus } {
  const status = run.status as NoticeStatus;
  const payloads = shapeReply({ status, finalText: "", error: run.error ?? GENERIC_NOTICE, toolErrors: [] });
  return { runId: run.runId, sessionKey: run.sessionKey, status, channelTarget: run.channelTarget, result: { payloads, meta: { reason: "not_started" } } };
}
