import { CHARS_PER_TOKEN, estimateTokens, MIN_PROMPT_BUDGET_TOKENS, messageChars } from "./context-budget";
import type { Message } from "./messages";
import { isSummaryMessage, type ViewMessage } from "./session-view";
import { truncateToolResult } from "./tool-result-truncation";

/**
 * Compaction planning (reference §J.94-95): which part of what the model
 * sees is summarised and which part stays verbatim, sized for the context
 * window of the model that runs next. Pure.
 *
 *   promptBudget = window - min(reserve, window - min(8000, window / 2))
 *   keep         = min(keepRecentTokens, promptBudget / 2) of the newest messages,
 *                  starting at a turn boundary (never at a tool result, so no
 *                  tool result is separated from its tool call)
 *   summary      <= min(4096, max(256, promptBudget * 0.15)) tokens
 *
 * Token sizes are our estimate times `tokenScale` (what a provider's overflow
 * error showed it really counts). When that still keeps everything, `force`
 * summarises everything before the current turn (the user message being
 * answered and what followed it stay verbatim); when there is nothing before
 * it, there is no real conversation to compact.
 */
export const COMPACTION_DEFAULTS = { keepRecentTokens: 20_000, timeoutSeconds: 180, reserveTokens: 20_000 } as const;
const SUMMARY_SHARE = 0.15;
const SUMMARY_MIN_TOKENS = 256;
const SUMMARY_MAX_TOKENS = 4096;
/** A tool result is cut to this much inside the summariser's input: its gist matters, not every byte. */
const SUMMARY_INPUT_TOOL_CHARS = 4000;
const SUMMARY_INPUT_MESSAGE_CHARS = 24_000;
/** Room for the summariser's instructions and the previous summary's framing. */
const INSTRUCTION_TOKENS = 600;

export interface CompactionPlanInput {
  view: readonly ViewMessage[];
  contextTokens: number;
  keepRecentTokens: number;
  reserveTokens: number;
  /** Provider tokens per estimated token (default 1). */
  tokenScale?: number;
  /** Summarise everything before the current turn when the budget alone keeps it all. */
  force?: boolean;
  /** The system prompt the next attempt sends (bootstrap files, skills, tools): the kept part must fit next to it. */
  systemPromptTokens?: number;
}

export type CompactionPlan =
  | { compact: false; reason: "nothing_to_compact" | "no_real_conversation" }
  | {
      compact: true;
      /** The budget kept everything: the cut was moved to the current turn. */
      forced: boolean;
      firstKeptSeq: number;
      toSummarize: Message[];
      previousSummary?: string;
      tokensBefore: number;
      keptTokens: number;
      summaryMaxTokens: number;
      /** The summariser's input, split so each call fits the window. */
      chunks: string[];
    };

export function promptBudgetTokens(contextTokens: number, reserveTokens: number): number {
  const window = Math.max(1, contextTokens);
  const minPrompt = Math.min(MIN_PROMPT_BUDGET_TOKENS, Math.max(1, Math.floor(window * 0.5)));
  return window - Math.max(0, Math.min(reserveTokens, window - minPrompt));
}

export function messageTokens(message: Message, tokenScale = 1): number {
  return Math.ceil(estimateTokens(messageChars(message)) * tokenScale);
}

export function planCompaction(input: CompactionPlanInput): CompactionPlan {
  const scale = Math.max(1, input.tokenScale ?? 1);
  const previous = input.view.find((m) => m.seq === undefined && isSummaryMessage(m.message));
  const stored = input.view.filter((m): m is Required<ViewMessage> => m.seq !== undefined);
  const budget = promptBudgetTokens(input.contextTokens, input.reserveTokens);
  const keepBudget = Math.min(input.keepRecentTokens, Math.floor(Math.max(0, budget - (input.systemPromptTokens ?? 0)) / 2));
  const byBudget = keptStart(stored, keepBudget, scale);
  const forced = byBudget === 0 && input.force === true;
  const cut = forced ? currentTurnStart(stored) : byBudget;
  if (cut === 0) return { compact: false, reason: forced ? "no_real_conversation" : "nothing_to_compact" };
  const toSummarize = stored.slice(0, cut).map((m) => m.message);
  const kept = stored.slice(cut);
  const summaryMaxTokens = Math.min(SUMMARY_MAX_TOKENS, Math.max(SUMMARY_MIN_TOKENS, Math.floor(budget * SUMMARY_SHARE)));
  const previousSummary = previous?.message.role === "user" ? previous.message.content : undefined;
  const chunkTokens = Math.max(500, budget - summaryMaxTokens * 2 - INSTRUCTION_TOKENS);
  return {
    compact: true,
    forced,
    firstKeptSeq: kept[0]?.seq ?? stored[stored.length - 1].seq + 1,
    toSummarize,
    ...(previousSummary ? { previousSummary } : {}),
    tokensBefore: input.view.reduce((sum, m) => sum + messageTokens(m.message, scale), 0),
    keptTokens: kept.reduce((sum, m) => sum + messageTokens(m.message, scale), 0),
    summaryMaxTokens,
    // Each summariser call must fit the provider's count, not our estimate.
    chunks: chunkTranscript(toSummarize, Math.floor((chunkTokens * CHARS_PER_TOKEN) / scale)),
  };
}

/** Index of the newest stored user message: where the turn being answered starts (0 when there is none). */
function currentTurnStart(stored: readonly Required<ViewMessage>[]): number {
  for (let i = stored.length - 1; i >= 0; i -= 1) if (stored[i].message.role === "user") return i;
  return 0;
}

/** Index of the first kept message: as many newest messages as fit, moved forward off tool results. */
function keptStart(stored: readonly Required<ViewMessage>[], keepBudget: number, scale: number): number {
  let start = stored.length;
  let used = 0;
  while (start > 0) {
    const cost = messageTokens(stored[start - 1].message, scale);
    if (used + cost > keepBudget) break;
    used += cost;
    start -= 1;
  }
  // The user message being answered stays verbatim even when it alone is over the keep budget.
  if (start === stored.length && stored[start - 1]?.message.role === "user") return start - 1;
  while (start < stored.length && stored[start].message.role === "tool_result") start += 1;
  return start;
}

/** The summariser's view of messages: plain labelled text, long tool output cut to head and tail. */
export function serializeForSummary(message: Message): string {
  if (message.role === "user") return `User: ${cap(message.content, SUMMARY_INPUT_MESSAGE_CHARS)}`;
  if (message.role === "tool_result") {
    const label = message.isError ? `Tool ${message.toolName} failed` : `Tool ${message.toolName} returned`;
    return `${label}: ${truncateToolResult(message.content, SUMMARY_INPUT_TOOL_CHARS).text}`;
  }
  const parts = message.content.flatMap((block) => {
    if (block.type === "text") return [cap(block.text, SUMMARY_INPUT_MESSAGE_CHARS)];
    if (block.type === "tool_call") return [`[called ${block.name} ${cap(JSON.stringify(block.args), 2000)}]`];
    return [];
  });
  return `Assistant: ${parts.join("\n")}`;
}

/** Splits the serialized transcript into pieces of at most `maxChars` (a message is never split unless alone too big). */
export function chunkTranscript(messages: readonly Message[], maxChars: number): string[] {
  const chunks: string[] = [];
  let current = "";
  for (const message of messages) {
    const text = cap(serializeForSummary(message), maxChars);
    if (current && current.length + text.length + 2 > maxChars) {
      chunks.push(current);
      current = "";
    }
    current = current ? `${current}\n\n${text}` : text;
  }
  if (current) chunks.push(current);
  return chunks;
}

function cap(text: string, maxChars: number): string {
  return text.length <= maxChars ? text : truncateToolResult(text, maxChars).text;
}

export interface ToolResultRewrite {
  targetSeq: number;
  message: Extract<Message, { role: "tool_result" }>;
  originalChars: number;
}

/** Tool results the model sees that are longer than `maxChars`, cut to head + tail. */
export function planToolResultTruncation(view: readonly ViewMessage[], maxChars: number): ToolResultRewrite[] {
  const rewrites: ToolResultRewrite[] = [];
  for (const { message, seq } of view) {
    if (seq === undefined || message.role !== "tool_result" || message.content.length <= maxChars) continue;
    const cut = truncateToolResult(message.content, maxChars);
    if (!cut.truncated) continue;
    rewrites.push({ targetSeq: seq, message: { ...message, content: cut.text }, originalChars: message.content.length });
  }
  return rewrites;
}
