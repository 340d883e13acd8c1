import type { Message } from "./messages";

/**
 * Context budget arithmetic of one attempt (reference §J): the precheck that
 * runs before a prompt is sent, the guard that runs before every model call
 * inside the tool loop, and the size caps for tool results. Pure: characters
 * in, a decision out. Tokens are estimated at 4 characters each, which is
 * what OpenClaw does too: cheap, provider-neutral, and biased the safe way
 * by the 1.2 margin.
 */
export const CHARS_PER_TOKEN = 4;
export const SAFETY_MARGIN = 1.2;
/** OpenClaw's DEFAULT_CONTEXT_TOKENS. */
export const DEFAULT_CONTEXT_TOKENS = 200_000;
/** The prompt always keeps at least this much room (or half a tiny window). */
export const MIN_PROMPT_BUDGET_TOKENS = 8000;
/** Truncation must win by this many tokens beyond the overflow to be worth it. */
export const TRUNCATION_HEADROOM_TOKENS = 512;
/** A single tool result may take at most this share of the window (chars) when it is capped. */
export const MAX_TOOL_RESULT_CONTEXT_SHARE = 0.3;
/** In-loop guard thresholds (share of the window in chars). */
export const GUARD_SINGLE_RESULT_SHARE = 0.5;
export const GUARD_CONTEXT_SHARE = 0.9;
/** Truncated tool results keep at least this many characters. */
export const MIN_TOOL_RESULT_CHARS = 2000;

export const PRECHECK_ROUTES = ["fits", "compact_only", "truncate_tool_results_only", "compact_then_truncate"] as const;
export type PrecheckRoute = (typeof PRECHECK_ROUTES)[number];

export const CONTEXT_GUARD_MESSAGE = "Context overflow: the context grew past the safe share of the model's window during the tool loop.";
export const PRECHECK_OVERFLOW_MESSAGE = "Context overflow: the prompt is too large for the model (precheck).";

export function estimateTokens(chars: number): number {
  return Math.ceil(chars / CHARS_PER_TOKEN);
}

/** Characters a message costs in the prompt (text, reasoning, tool calls with their JSON arguments). */
export function messageChars(message: Message): number {
  if (message.role === "user" || message.role === "tool_result") return message.content.length;
  let chars = 0;
  for (const block of message.content) {
    if (block.type === "tool_call") chars += block.name.length + JSON.stringify(block.args).length;
    else chars += block.text.length;
  }
  return chars;
}

export function contextChars(system: string, messages: readonly Message[]): number {
  return messages.reduce((sum, message) => sum + messageChars(message), system.length);
}

/**
 * The per-result cap: at most 30 % of the window, and a hard cap that grows
 * with the window (16k chars below 100k tokens, 32k below 200k, 64k above),
 * unless configured. Never below 2000 characters.
 */
export function resolveToolResultMaxChars(contextWindowTokens: number, configuredMaxChars?: number): number {
  const share = Math.floor(contextWindowTokens * MAX_TOOL_RESULT_CONTEXT_SHARE * CHARS_PER_TOKEN);
  const hard = configuredMaxChars ?? (contextWindowTokens >= 200_000 ? 64_000 : contextWindowTokens >= 100_000 ? 32_000 : 16_000);
  return Math.max(MIN_TOOL_RESULT_CHARS, Math.min(share, hard));
}

export interface PrecheckInput {
  system: string;
  /** The assembled history, the new user prompt included. */
  messages: readonly Message[];
  contextTokenBudget: number;
  /** Tokens kept free for the answer and for compaction. */
  reserveTokens: number;
  /** Tool results longer than this could be truncated to it. */
  toolResultMaxChars: number;
  /** Provider tokens per estimated token, learnt from an overflow (default 1). */
  tokenScale?: number;
}

export interface PrecheckResult {
  route: PrecheckRoute;
  estimatedTokens: number;
  promptBudgetTokens: number;
  /** Estimated tokens over the prompt budget (<= 0 when it fits). */
  overflowTokens: number;
  /** Characters truncation of oversized tool results would remove. */
  reducibleChars: number;
}

/**
 * shouldPreemptivelyCompactBeforePrompt, as a pure function:
 *   estimate     = tokens(history + system + prompt) x 1.2
 *   minPrompt    = min(8000, max(1, floor(budget x 0.5)))
 *   reserve      = min(reserveTokens, budget - minPrompt)
 *   promptBudget = budget - reserve;  overflow = estimate - promptBudget
 * Routes, cheapest first: `fits`; `compact_only` when no tool result can be
 * shortened; `truncate_tool_results_only` when truncation frees at least
 * max(overflowChars + 512 x 4, ceil(1.5 x overflowChars)); else `compact_then_truncate`.
 */
export function precheckContext(input: PrecheckInput): PrecheckResult {
  const budget = Math.max(1, input.contextTokenBudget);
  const scale = input.tokenScale ?? 1;
  const estimatedTokens = Math.ceil(estimateTokens(contextChars(input.system, input.messages)) * SAFETY_MARGIN * scale);
  const minPromptBudget = Math.min(MIN_PROMPT_BUDGET_TOKENS, Math.max(1, Math.floor(budget * 0.5)));
  const reserve = Math.max(0, Math.min(input.reserveTokens, budget - minPromptBudget));
  const promptBudgetTokens = budget - reserve;
  const overflowTokens = estimatedTokens - promptBudgetTokens;
  const reducibleChars = reducibleToolResultChars(input.messages, input.toolResultMaxChars);
  const base = { estimatedTokens, promptBudgetTokens, overflowTokens, reducibleChars };
  if (overflowTokens <= 0) return { route: "fits", ...base };
  if (reducibleChars <= 0) return { route: "compact_only", ...base };
  // Characters the prompt must lose: fewer per provider token when the provider counts more than we estimate.
  const overflowChars = Math.ceil((overflowTokens * CHARS_PER_TOKEN) / scale);
  const needed = Math.max(overflowChars + TRUNCATION_HEADROOM_TOKENS * CHARS_PER_TOKEN, Math.ceil(1.5 * overflowChars));
  return { route: reducibleChars >= needed ? "truncate_tool_results_only" : "compact_then_truncate", ...base };
}

export function reducibleToolResultChars(messages: readonly Message[], maxChars: number): number {
  const cap = Math.max(MIN_TOOL_RESULT_CHARS, maxChars);
  return messages.reduce((sum, m) => (m.role === "tool_result" && m.content.length > cap ? sum + m.content.length - cap : sum), 0);
}

export type ContextGuardResult =
  | { ok: true }
  | { ok: false; reason: "single_tool_result" | "context"; chars: number; limitChars: number; message: string };

/**
 * The in-loop guard, checked before every model call after the first: one
 * tool result over 50 % of the window, or the whole context over 90 %, is an
 * overflow that the outer loop recovers from (compaction), rather than a
 * request that is bound to fail at the provider.
 */
export function checkContextGuard(system: string, messages: readonly Message[], contextWindowTokens: number, tokenScale = 1): ContextGuardResult {
  const windowChars = Math.floor((contextWindowTokens * CHARS_PER_TOKEN) / Math.max(1, tokenScale));
  const singleLimit = Math.floor(windowChars * GUARD_SINGLE_RESULT_SHARE);
  for (const message of messages) {
    if (message.role === "tool_result" && message.content.length > singleLimit) {
      return { ok: false, reason: "single_tool_result", chars: message.content.length, limitChars: singleLimit, message: CONTEXT_GUARD_MESSAGE };
    }
  }
  const total = contextChars(system, messages);
  const contextLimit = Math.floor(windowChars * GUARD_CONTEXT_SHARE);
  if (total > contextLimit) return { ok: false, reason: "context", chars: total, limitChars: contextLimit, message: CONTEXT_GUARD_MESSAGE };
  return { ok: true };
}
