import { assistantText, type Usage } from "../core/messages";
import type { ModelProvider } from "../providers/types";

/**
 * The model call(s) that write a compaction summary: a separate, bounded
 * request (no tools) with its own timeout, aborted with the run. A long
 * history is summarised chunk by chunk, each call folding the next chunk into
 * the summary so far, so every call fits the window of the model that runs next.
 */
export const SUMMARIZER_SYSTEM = [
  "You compact a conversation between a user and an AI agent so the agent can continue it with less context.",
  "Write a faithful, dense summary in the conversation's language: the user's goals and constraints, decisions taken,",
  "facts and results obtained (tool outputs, numbers, names, paths, ids), work already done, what is still pending,",
  "and anything the agent promised. Keep exact values. No preamble, no commentary about the summary itself.",
].join(" ");

export interface SummarizeParams {
  provider: ModelProvider;
  model: string;
  chunks: readonly string[];
  previousSummary?: string;
  maxOutputTokens: number;
  /** Whole-compaction bound (compaction.timeoutSeconds). */
  timeoutMs: number;
  /** The run's abort signal. */
  signal: AbortSignal;
  idleTimeoutMs?: number;
  /** Each summary call's usage as it ends: metered like any model call (spend budgets, the attempt's usage). */
  onUsage?(usage: Usage): Promise<void>;
}

export type SummarizeResult = { ok: true; summary: string; calls: number } | { ok: false; reason: string; calls: number };

export async function summarize(params: SummarizeParams): Promise<SummarizeResult> {
  const signal = AbortSignal.any([params.signal, AbortSignal.timeout(params.timeoutMs)]);
  let summary = params.previousSummary;
  let calls = 0;
  for (const chunk of params.chunks) {
    calls += 1;
    const written = await summarizeChunk(params, chunk, summary, signal);
    if (!written.ok) {
      const timedOut = !params.signal.aborted && signal.aborted;
      return { ok: false, reason: timedOut ? `compaction timed out after ${params.timeoutMs} ms` : written.reason, calls };
    }
    summary = written.text;
  }
  if (!summary || summary.trim() === "") return { ok: false, reason: "the summary came back empty", calls };
  return { ok: true, summary: summary.trim(), calls };
}

async function summarizeChunk(
  params: SummarizeParams,
  chunk: string,
  previous: string | undefined,
  signal: AbortSignal,
): Promise<{ ok: true; text: string } | { ok: false; reason: string }> {
  const prompt = [
    previous ? `Summary so far:\n${previous}` : undefined,
    `Conversation${previous ? " that follows it" : ""}:\n${chunk}`,
    previous ? "Write the updated summary covering both." : "Write the summary.",
  ]
    .filter(Boolean)
    .join("\n\n");
  const stream = params.provider.stream({
    model: params.model,
    system: SUMMARIZER_SYSTEM,
    messages: [{ role: "user", content: prompt }],
    tools: [],
    maxOutputTokens: params.maxOutputTokens,
    signal,
    idleTimeoutMs: params.idleTimeoutMs,
  });
  for await (const event of stream) {
    if (event.type === "end") {
      await params.onUsage?.(event.usage);
      const text = assistantText(event.message).trim();
      return text ? { ok: true, text } : { ok: false, reason: "the summary came back empty" };
    }
    if (event.type === "error") return { ok: false, reason: `summary call failed (${event.failure.kind}): ${event.failure.message}` };
  }
  return { ok: false, reason: "summary stream ended without a terminal event" };
}
