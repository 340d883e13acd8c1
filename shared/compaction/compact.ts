import { appendEntries, readEntries, type WriterClaim } from "../aws/transcript";
import type { Db } from "../aws/dynamo";
import { messageTokens, planCompaction } from "../core/compaction-plan";
import type { CompactionRecord } from "../core/transcript-entries";
import type { Usage } from "../core/messages";
import { sessionView, summaryMessage } from "../core/session-view";
import { compactionEvent } from "../events/run-events";
import type { EventStream } from "../aws/event-log";
import { EMPTY_HOOKS, type HookRegistry } from "../hooks/registry";
import { runObservers } from "../hooks/runners";
import type { ModelProvider } from "../providers/types";
import { summarize } from "./summarize";
import { truncateStoredToolResults } from "./truncate";

/**
 * Compaction of a session transcript under the caller's writer claim (the
 * same claim every append takes): summarise what the model sees except its
 * newest part, and append a compaction entry that says where the verbatim
 * part starts. Nothing is deleted: older entries stay stored, readers start
 * from the latest compaction (core/session-view).
 */
export interface CompactionContext {
  db: Db;
  claim: WriterClaim;
  run: { runId: string; sessionKey: string };
  hooks?: HookRegistry;
  events?: { emit(stream: EventStream, data: Record<string, unknown>): void };
}

export interface CompactRequest {
  trigger: CompactionRecord["trigger"];
  /** The model that runs next: the summary is written by it and sized for its window. */
  provider: ModelProvider;
  model: string;
  modelRef: string;
  contextTokens: number;
  keepRecentTokens: number;
  reserveTokens: number;
  timeoutMs: number;
  signal: AbortSignal;
  idleTimeoutMs?: number;
  /** Also cut oversized tool results (precheck route compact_then_truncate). */
  thenTruncateToChars?: number;
  /** Whether an attempt follows on the compacted transcript (the `end` event's willRetry). */
  willRetry: boolean;
  /** Provider tokens per estimated token for this model (run-loop Calibration). */
  tokenScale?: number;
  /** When the budget keeps everything, summarise everything before the current turn. */
  force?: boolean;
  /** Usage of each summary call (shared/compaction/summarize.ts). */
  onUsage?(usage: Usage): Promise<void>;
  /** Tokens of the system prompt the last attempt sent (the kept part must fit next to it). */
  systemPromptTokens?: number;
}

export type CompactOutcome =
  | { ok: true; compacted: true; claim: WriterClaim; record: CompactionRecord; seq: number; truncated: number }
  /** Nothing before the turn being answered (OpenClaw's "no real conversation messages"): the run goes on as it is. */
  | { ok: true; compacted: false; claim: WriterClaim; reason: string }
  | { ok: false; claim: WriterClaim; reason: string };

export async function compactTranscript(ctx: CompactionContext, request: CompactRequest): Promise<CompactOutcome> {
  const hooks = ctx.hooks ?? EMPTY_HOOKS;
  const view = sessionView(await readEntries(ctx.db, ctx.claim.sessionId));
  ctx.events?.emit("compaction", compactionEvent.start(request.trigger));
  const fail = (reason: string): CompactOutcome => {
    ctx.events?.emit("compaction", compactionEvent.end({ willRetry: false, completed: false }));
    return { ok: false, claim: ctx.claim, reason };
  };
  await runObservers(hooks, "before_compaction", { ...ctx.run, messageCount: view.messages.length });
  const plan = planCompaction({
    view: view.messages,
    contextTokens: request.contextTokens,
    keepRecentTokens: request.keepRecentTokens,
    reserveTokens: request.reserveTokens,
    tokenScale: request.tokenScale,
    force: request.force,
    systemPromptTokens: request.systemPromptTokens,
  });
  if (!plan.compact && plan.reason === "no_real_conversation") {
    ctx.events?.emit("compaction", compactionEvent.end({ willRetry: request.willRetry, completed: false }));
    return { ok: true, compacted: false, claim: ctx.claim, reason: "no real conversation messages before the current turn" };
  }
  if (!plan.compact) return fail("nothing to compact: the context is only the newest messages");
  const written = await summarize({
    provider: request.provider,
    model: request.model,
    chunks: plan.chunks,
    previousSummary: plan.previousSummary,
    maxOutputTokens: plan.summaryMaxTokens,
    timeoutMs: request.timeoutMs,
    signal: request.signal,
    idleTimeoutMs: request.idleTimeoutMs,
    ...(request.onUsage ? { onUsage: request.onUsage } : {}),
  });
  if (!written.ok) return fail(`compaction failed: ${written.reason}`);
  const record: CompactionRecord = {
    summary: written.summary,
    firstKeptSeq: plan.firstKeptSeq,
    tokensBefore: plan.tokensBefore,
    tokensAfter: messageTokens(summaryMessage(written.summary), request.tokenScale) + plan.keptTokens,
    trigger: request.trigger,
    model: request.modelRef,
    contextTokens: request.contextTokens,
    summarizedMessages: plan.toSummarize.length,
  };
  let claim = await appendEntries(ctx.db, ctx.claim, [{ kind: "compaction", compaction: record }]);
  const seq = claim.nextSeq - 1;
  let truncated = 0;
  if (request.thenTruncateToChars) {
    const cut = await truncateStoredToolResults(ctx.db, claim, request.thenTruncateToChars);
    claim = cut.claim;
    truncated = cut.rewritten;
  }
  await runObservers(hooks, "after_compaction", { ...ctx.run, tokenCount: record.tokensAfter });
  ctx.events?.emit(
    "compaction",
    compactionEvent.end({ willRetry: request.willRetry, completed: true, tokensBefore: record.tokensBefore, tokensAfter: record.tokensAfter }),
  );
  return { ok: true, compacted: true, claim, record, seq, truncated };
}
