/**
 * What a provider's error says only in its text, read once, here, at the
 * adapter: the numbers of a context overflow, the cause of a rejected request,
 * a rate limit's window. Each pattern sits next to the real message it reads.
 * The outer loop only sees the fields (core/failures.ts).
 */
import { THINKING_LEVELS, type FormatCause, type OverflowFacts, type ThinkingLevel } from "../core/failures";

const int = (text: string | undefined) => (text === undefined ? undefined : Number(text.replace(/[,_]/g, "")));
const N = "(\\d[\\d,]*)";

/** Window patterns, each with the real message it reads. */
const MAX_CONTEXT: ReadonlyArray<{ pattern: RegExp; example: string }> = [
  // OpenAI, vLLM, Ollama's OpenAI layer, LiteLLM proxies.
  { pattern: new RegExp(`maximum context length is ${N} tokens`, "i"), example: "This model's maximum context length is 128000 tokens. However, your messages resulted in 130532 tokens. Please reduce the length of the messages." },
  // Anthropic.
  { pattern: new RegExp(`tokens > ${N} maximum`, "i"), example: "prompt is too long: 215000 tokens > 200000 maximum" },
  // Anthropic, when input + max_tokens does not fit.
  { pattern: new RegExp(`exceed context limit: \\d[\\d,]* \\+ \\d[\\d,]* > ${N}`, "i"), example: "input length and `max_tokens` exceed context limit: 197202 + 21333 > 200000, decrease input length or `max_tokens` and try again" },
  // llama.cpp server (type exceed_context_size_error; the body also carries n_ctx).
  { pattern: new RegExp(`exceeds the available context size \\(${N} tokens\\)`, "i"), example: "request (4476 tokens) exceeds the available context size (4096 tokens), try increasing it" },
  // vLLM before the OpenAI-style wording.
  { pattern: new RegExp(`exceeds limit of ${N}`, "i"), example: "Input prompt (2664 tokens) is too long and exceeds limit of 2048" },
];

/** Prompt-size patterns, most specific first. */
const PROMPT_TOKENS: ReadonlyArray<{ pattern: RegExp; example: string }> = [
  // vLLM / older OpenAI: the prompt's share is the "in the messages" figure, not the total requested.
  { pattern: new RegExp(`\\(${N} in the messages`, "i"), example: "This model's maximum context length is 32768 tokens. However, you requested 33792 tokens (29696 in the messages, 4096 in the completion). Please reduce the length of the messages or completion." },
  // OpenAI completions-era wording.
  { pattern: new RegExp(`\\(${N} in your prompt`, "i"), example: "This model's maximum context length is 4097 tokens, however you requested 4116 tokens (3860 in your prompt; 256 for the completion). Please reduce your prompt; or completion length." },
  // OpenAI chat.
  { pattern: new RegExp(`your messages resulted in ${N} tokens`, "i"), example: "This model's maximum context length is 128000 tokens. However, your messages resulted in 130532 tokens. Please reduce the length of the messages." },
  // vLLM >= 0.10.
  { pattern: new RegExp(`your (?:request has|prompt contains at least) ${N} input tokens`, "i"), example: "This model's maximum context length is 128000 tokens. However, you requested 65535 output tokens and your prompt contains at least 62466 input tokens, for a total of at least 128001 tokens." },
  // Anthropic.
  { pattern: new RegExp(`prompt is too long: ${N} tokens`, "i"), example: "prompt is too long: 215000 tokens > 200000 maximum" },
  { pattern: new RegExp(`exceed context limit: ${N} \\+`, "i"), example: "input length and `max_tokens` exceed context limit: 197202 + 21333 > 200000, decrease input length or `max_tokens` and try again" },
  // llama.cpp server.
  { pattern: new RegExp(`request \\(${N} tokens\\) exceeds the available context size`, "i"), example: "request (4476 tokens) exceeds the available context size (4096 tokens), try increasing it" },
  // vLLM before the OpenAI-style wording.
  { pattern: new RegExp(`input prompt \\(${N} tokens\\) is too long`, "i"), example: "Input prompt (2664 tokens) is too long and exceeds limit of 2048" },
];

export const OVERFLOW_EXAMPLES: readonly string[] = [...new Set([...MAX_CONTEXT, ...PROMPT_TOKENS].map((p) => p.example))];

/**
 * The provider's window and the rejected prompt's size. `body` is the raw
 * error object: llama.cpp sends `n_ctx` and `n_prompt_tokens` next to the
 * message ({"code":400,"message":"request (4476 tokens) exceeds the available
 * context size (4096 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":4476,"n_ctx":4096}).
 * Ollama's "the input length exceeds the context length" states neither number.
 */
export function overflowFacts(message: string, body?: Record<string, unknown>): OverflowFacts | undefined {
  const fromBody = (key: string) => (typeof body?.[key] === "number" && (body[key] as number) > 0 ? Math.round(body[key] as number) : undefined);
  const first = (patterns: typeof MAX_CONTEXT) => {
    for (const { pattern } of patterns) {
      const match = pattern.exec(message);
      if (match) return int(match[1]);
    }
    return undefined;
  };
  const maxContextTokens = fromBody("n_ctx") ?? first(MAX_CONTEXT);
  const promptTokens = fromBody("n_prompt_tokens") ?? first(PROMPT_TOKENS);
  if (maxContextTokens === undefined && promptTokens === undefined) return undefined;
  return { ...(maxContextTokens ? { maxContextTokens } : {}), ...(promptTokens ? { promptTokens } : {}) };
}

/**
 * Role-ordering rejections. Real messages:
 * - Anthropic 400: "messages: roles must alternate between \"user\" and \"assistant\", but found multiple \"user\" roles in a row"
 * - Gemini/OpenAI-compatible 400: "Please ensure that multiturn requests alternate between user and model." /
 *   "Invalid request: incorrect role information"
 */
const ROLE_ORDERING = /incorrect role information|roles must alternate|must alternate between/i;

/** Anthropic 400: "messages.0.content.1.image.source.base64: image exceeds 5 MB maximum: 7340032 bytes > 5242880 bytes" */
const IMAGE_TOO_LARGE = /image exceeds\s+(\d+(?:\.\d+)?)\s*mb/i;

/**
 * Refused reasoning levels. Real messages:
 * - OpenAI 400: "Unsupported value: 'reasoning_effort' does not support 'minimal' with this model. Supported values are: 'low', 'medium', and 'high'."
 * - OpenAI 400: "Unsupported parameter: 'reasoning_effort' is not supported with this model."
 * - Anthropic 400: "thinking: Extended thinking is not supported for this model" / "`thinking` is not supported on this model"
 * - Anthropic 400: "thinking.budget_tokens: Input should be greater than or equal to 1024" (a reasoning constraint)
 */
const SUPPORTED_LIST = /supported values are:?\s*([^.]+)/i;
const REASONING_CONSTRAINT = /budget_tokens|reasoning[ _]effort.*(?:must|should)|thinking.*(?:must|should) be/i;
const NOT_SUPPORTED = /(?:thinking|reasoning|reasoning_effort)[^.]*not supported|not supported[^.]*(?:thinking|reasoning)/i;

/** Reasoning levels the model would accept instead, best first; undefined when the message is not about reasoning. */
export function acceptedThinkingLevels(message: string): ThinkingLevel[] | undefined {
  const listed = SUPPORTED_LIST.exec(message);
  if (listed && /reasoning|thinking|effort/i.test(message)) {
    return THINKING_LEVELS.filter((level) => new RegExp(`['"\`]?\\b${level}\\b['"\`]?`, "i").test(listed[1]));
  }
  if (REASONING_CONSTRAINT.test(message)) return ["minimal", "off"];
  if (NOT_SUPPORTED.test(message)) return ["off"];
  return undefined;
}

/** Why a 400-class request was rejected, when the text says something the loop can act on. */
export function formatCause(message: string): FormatCause | undefined {
  const accepted = acceptedThinkingLevels(message);
  if (accepted) return { reason: "thinking_level", accepted };
  if (ROLE_ORDERING.test(message)) return { reason: "role_ordering" };
  const image = IMAGE_TOO_LARGE.exec(message);
  if (image) return { reason: "image_size", maxMb: image[1] };
  if (/image exceeds/i.test(message) && /\bmb\b/i.test(message)) return { reason: "image_size" };
  return undefined;
}

/**
 * Rate limits whose window is days, not seconds: a same-model retry within a
 * minute cannot succeed (reference §G.68). Real messages:
 * - OpenAI 429: "Rate limit reached for gpt-4o-mini in organization org-x on requests per day (RPD): Limit 200, Used 200, Requested 1."
 * - Anthropic 429: "Your organization has reached its weekly limit." / "You have reached your monthly usage limit."
 */
const LONG_WINDOW = /per day|\(RPD\)|\(TPD\)|daily|weekly|per week|monthly|per month|quota|subscription/i;

export function isLongWindowRateLimit(message: string): boolean {
  return LONG_WINDOW.test(message);
}
