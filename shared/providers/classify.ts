/**
 * The one place provider errors become a ProviderFailure. Order of evidence:
 * 1. codes that overrule the HTTP status (OpenAI `insufficient_quota` on a 429
 *    is billing, not a rate limit; `context_length_exceeded` on a 400 is not a
 *    format error);
 * 2. the HTTP status;
 * 3. the provider's error `type`/`code` (in-stream errors have no status);
 * 4. message text, only where the provider gives no other signal, each pattern
 *    next to the real message it matches.
 * Retryability and Retry-After are decided here too, so the runner never looks
 * at provider payloads.
 */
// Only the SDKs' error modules (the classes the SDKs throw): the clients themselves load lazily (lazy-sdk.ts).
import * as AnthropicSdk from "@anthropic-ai/sdk/core/error";
import * as OpenAISdk from "openai/core/error";
import type { FailureKind, ProviderFailure } from "../core/failures";
import { formatCause, isLongWindowRateLimit, overflowFacts } from "./failure-details";

/** Headers as the SDKs expose them (fetch `Headers`) or as plain records. */
export type HeadersLike = Headers | Record<string, string | string[] | undefined>;

/** The provider-neutral facts an error carries. */
export interface ErrorSignal {
  status?: number;
  /** OpenAI `error.type`, Anthropic `error.type`. */
  type?: string;
  /** OpenAI `error.code`, Anthropic `error.details.error_code`. */
  code?: string;
  message: string;
  headers?: HeadersLike;
  /** The provider's error object, for numbers it sends beside the message (llama.cpp `n_ctx`, `n_prompt_tokens`). */
  body?: Record<string, unknown>;
}

/** Server-advised waits up to this long are a "short" window worth a same-model retry. */
export const SHORT_RETRY_WINDOW_MS = 60_000;
/** Anything beyond a day is a broken header, not advice. */
export const MAX_SANE_RETRY_AFTER_MS = 24 * 60 * 60 * 1000;

const RETRYABLE: Record<FailureKind, boolean> = {
  rate_limit: true,
  overloaded: true,
  server_error: true,
  timeout: true,
  // OpenClaw retries unclassified errors silently once or twice; we advise the same.
  unknown: true,
  auth: false,
  auth_permanent: false,
  billing: false,
  context_overflow: false,
  format: false,
  model_not_found: false,
  aborted: false,
};

/** Codes and types that decide the kind whatever the status says. */
const OVERRIDING: Record<string, FailureKind> = {
  insufficient_quota: "billing",
  billing_error: "billing",
  context_length_exceeded: "context_overflow",
  request_too_large: "context_overflow",
  // llama.cpp server: {"code":400,"message":"request (4476 tokens) exceeds the available context size (4096 tokens), try increasing it","type":"exceed_context_size_error"}.
  exceed_context_size_error: "context_overflow",
  model_not_found: "model_not_found",
  overloaded_error: "overloaded",
};

/** Error types/codes for errors that arrive without an HTTP status (in-stream). */
const BY_TYPE: Record<string, FailureKind> = {
  rate_limit_error: "rate_limit",
  rate_limit_exceeded: "rate_limit",
  // OpenAI 429 bodies carry the limited resource as the type.
  tokens: "rate_limit",
  requests: "rate_limit",
  authentication_error: "auth",
  invalid_api_key: "auth",
  permission_error: "auth_permanent",
  not_found_error: "model_not_found",
  api_error: "server_error",
  server_error: "server_error",
  timeout_error: "timeout",
  invalid_request_error: "format",
  invalid_prompt: "format",
};

function kindForStatus(status: number | undefined): FailureKind | undefined {
  if (status === undefined) return undefined;
  switch (status) {
    case 400:
    case 422:
      return "format";
    case 401:
      return "auth";
    case 402:
      return "billing";
    case 403:
      return "auth_permanent";
    case 404:
      return "model_not_found";
    case 408:
    case 504:
      return "timeout";
    case 413:
      return "context_overflow";
    case 429:
      return "rate_limit";
    case 503:
    case 529:
      return "overloaded";
  }
  if (status >= 500) return "server_error";
  return undefined;
}

/**
 * Message patterns for errors whose status and type are too generic (a 400
 * `invalid_request_error` covers both "bad tool schema" and "prompt too long").
 */
const TEXT_PATTERNS: ReadonlyArray<{ pattern: RegExp; kind: FailureKind; example: string }> = [
  // Anthropic 400 invalid_request_error.
  { pattern: /prompt is too long/i, kind: "context_overflow", example: "prompt is too long: 208310 tokens > 200000 maximum" },
  // Anthropic 400 invalid_request_error when input + max_tokens does not fit.
  {
    pattern: /exceed context limit/i,
    kind: "context_overflow",
    example: "input length and `max_tokens` exceed context limit: 197202 + 21333 > 200000, decrease input length or `max_tokens` and try again",
  },
  // vLLM / OpenAI-compatible servers: 400 with `code: 400` and no context_length_exceeded code.
  {
    pattern: /maximum context length is \d+ tokens/i,
    kind: "context_overflow",
    example: "This model's maximum context length is 32768 tokens. However, you requested 33792 tokens (29696 in the messages, 4096 in the completion). Please reduce the length of the messages or completion.",
  },
  // vLLM before the OpenAI-style wording.
  { pattern: /input prompt \(\d+ tokens\) is too long/i, kind: "context_overflow", example: "Input prompt (2664 tokens) is too long and exceeds limit of 2048" },
  // llama.cpp server without the error type (older builds).
  {
    pattern: /exceeds the available context size/i,
    kind: "context_overflow",
    example: "the request exceeds the available context size, try increasing it",
  },
  // Ollama with truncation off (no numbers stated).
  { pattern: /input length exceeds the context length/i, kind: "context_overflow", example: "the input length exceeds the context length" },
  // Anthropic 400 invalid_request_error for an empty prepaid balance.
  {
    pattern: /credit balance is too low/i,
    kind: "billing",
    example: "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.",
  },
];

export const CLASSIFIER_TEXT_EXAMPLES: ReadonlyArray<{ kind: FailureKind; example: string }> = TEXT_PATTERNS.map(
  ({ kind, example }) => ({ kind, example }),
);

function kindFromText(message: string): FailureKind | undefined {
  return TEXT_PATTERNS.find(({ pattern }) => pattern.test(message))?.kind;
}

export function kindOf(signal: ErrorSignal): FailureKind {
  const overriding = OVERRIDING[signal.code ?? ""] ?? OVERRIDING[signal.type ?? ""];
  if (overriding) return overriding;
  const byStatus = kindForStatus(signal.status);
  if (byStatus && byStatus !== "format") return byStatus;
  // Generic 400/422 or no status at all: the text may be the only real signal.
  const byText = kindFromText(signal.message);
  if (byText) return byText;
  if (byStatus) return byStatus;
  return BY_TYPE[signal.code ?? ""] ?? BY_TYPE[signal.type ?? ""] ?? "unknown";
}

function header(headers: HeadersLike | undefined, name: string): string | undefined {
  if (!headers) return undefined;
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value[0] : value;
}

/** Any positive advised delay, however large; undefined when absent or unparseable. */
function advisedDelayMs(headers: HeadersLike | undefined, now: number): number | undefined {
  const positive = (ms: number) => (Number.isFinite(ms) && ms > 0 ? Math.ceil(ms) : undefined);
  const msHeader = header(headers, "retry-after-ms")?.trim();
  const fromMs = msHeader ? positive(Number(msHeader)) : undefined;
  if (fromMs !== undefined) return fromMs;
  const value = header(headers, "retry-after")?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return positive(Number(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : positive(date - now);
}

/**
 * Server-advised delay from `retry-after-ms` (OpenAI, milliseconds) or
 * `retry-after` (seconds or an HTTP date). Returns undefined unless the value
 * is positive and at most MAX_SANE_RETRY_AFTER_MS.
 */
export function parseRetryAfterMs(headers: HeadersLike | undefined, now: number = Date.now()): number | undefined {
  const ms = advisedDelayMs(headers, now);
  return ms !== undefined && ms <= MAX_SANE_RETRY_AFTER_MS ? ms : undefined;
}

/**
 * OpenAI 429 bodies often carry the wait only in prose when no header is sent:
 * "Rate limit reached for gpt-4o in organization org-xyz on tokens per min (TPM):
 * Limit 30000, Used 29660, Requested 1130. Please try again in 1.58s."
 */
function retryAfterFromText(message: string): number | undefined {
  const match = /try again in (\d+(?:\.\d+)?)(ms|s)\b/i.exec(message);
  if (!match) return undefined;
  const ms = Number(match[1]) * (match[2].toLowerCase() === "ms" ? 1 : 1000);
  return ms > 0 ? Math.ceil(ms) : undefined;
}

export function classifySignal(signal: ErrorSignal, responseStarted: boolean, now: number = Date.now()): ProviderFailure {
  const kind = kindOf(signal);
  const failure: ProviderFailure = { kind, message: signal.message, retryable: RETRYABLE[kind], responseStarted };
  if (signal.status !== undefined) failure.status = signal.status;
  const advised = advisedDelayMs(signal.headers, now) ?? (kind === "rate_limit" ? retryAfterFromText(signal.message) : undefined);
  // An absurd delay is not reported, but it still says "not worth waiting for".
  if (advised !== undefined && advised <= MAX_SANE_RETRY_AFTER_MS) failure.retryAfterMs = advised;
  if (kind === "rate_limit") {
    // No advice at all: assume the common per-minute window (OpenClaw retries 10/20/30 s), unless the text names a longer one.
    const short = (advised === undefined || advised <= SHORT_RETRY_WINDOW_MS) && !isLongWindowRateLimit(signal.message);
    failure.rateLimitWindow = short ? "short" : "long";
  }
  if (kind === "context_overflow") {
    const overflow = overflowFacts(signal.message, signal.body);
    if (overflow) failure.overflow = overflow;
  }
  if (kind === "format") {
    const cause = formatCause(signal.message);
    if (cause) failure.cause = cause;
  }
  return failure;
}

export function abortedFailure(responseStarted: boolean): ProviderFailure {
  return { kind: "aborted", message: "Request was aborted.", retryable: false, responseStarted };
}

export function idleTimeoutFailure(idleTimeoutMs: number, responseStarted: boolean): ProviderFailure {
  return {
    kind: "timeout",
    message: `No data from the provider for ${idleTimeoutMs} ms.`,
    retryable: true,
    responseStarted,
  };
}

/** The stream ended without the provider's terminal event (dropped connection, proxy cut-off). */
export function truncatedStreamFailure(responseStarted: boolean, detail: string): ProviderFailure {
  return { kind: "server_error", message: `Stream ended early: ${detail}`, retryable: true, responseStarted };
}

/** Extracts the neutral facts from either SDK's APIError; undefined for anything else. */
export function errorSignalOf(error: unknown): ErrorSignal | undefined {
  if (error instanceof AnthropicSdk.APIError) {
    // Anthropic keeps the whole body in `.error`; the SDK lifts type and message out of it.
    const errorCode = (error as { errorCode?: unknown }).errorCode;
    return {
      status: error.status,
      type: error.type ?? undefined,
      code: typeof errorCode === "string" ? errorCode : undefined,
      message: error.apiMessage ?? error.message,
      headers: error.headers,
    };
  }
  if (error instanceof OpenAISdk.APIError) {
    // OpenAI keeps the inner `error` object; `code` is a number on some compatible servers (vLLM).
    const inner = error.error as { message?: unknown } | undefined;
    return {
      status: error.status,
      type: typeof error.type === "string" ? error.type : undefined,
      code: typeof error.code === "string" ? error.code : undefined,
      message: typeof inner?.message === "string" ? inner.message : error.message,
      headers: error.headers,
      ...(inner && typeof inner === "object" ? { body: inner as Record<string, unknown> } : {}),
    };
  }
  return undefined;
}

const TIMEOUT_CODES = new Set(["ETIMEDOUT", "ESOCKETTIMEDOUT", "UND_ERR_CONNECT_TIMEOUT", "UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT"]);

function networkCodeOf(error: unknown): string | undefined {
  for (let current: unknown = error, depth = 0; current && depth < 4; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string") return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

function messageOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as { cause?: unknown }).cause;
  return cause instanceof Error && cause.message !== error.message ? `${error.message} (${cause.message})` : error.message;
}

function isAbort(error: unknown): boolean {
  return (
    error instanceof OpenAISdk.APIUserAbortError ||
    error instanceof AnthropicSdk.APIUserAbortError ||
    (error instanceof Error && error.name === "AbortError")
  );
}

/** Classifies anything an SDK call or stream iteration threw. */
export function classifyProviderError(error: unknown, responseStarted: boolean, now: number = Date.now()): ProviderFailure {
  if (isAbort(error)) return abortedFailure(responseStarted);
  if (error instanceof OpenAISdk.APIConnectionTimeoutError || error instanceof AnthropicSdk.APIConnectionTimeoutError) {
    return { kind: "timeout", message: messageOf(error), retryable: true, responseStarted };
  }
  const isConnection = error instanceof OpenAISdk.APIConnectionError || error instanceof AnthropicSdk.APIConnectionError;
  const signal = isConnection ? undefined : errorSignalOf(error);
  if (signal) return classifySignal(signal, responseStarted, now);
  const code = networkCodeOf(error);
  if (code && TIMEOUT_CODES.has(code)) return { kind: "timeout", message: messageOf(error), retryable: true, responseStarted };
  // Refused/reset connections, a socket cut mid-body (undici: "terminated"), or an
  // unparseable SSE chunk: the server side failed, and a fresh request may work.
  if (isConnection || code || error instanceof SyntaxError || (error instanceof TypeError && error.message === "terminated")) {
    return { kind: "server_error", message: messageOf(error), retryable: true, responseStarted };
  }
  return { kind: "unknown", message: messageOf(error), retryable: RETRYABLE.unknown, responseStarted };
}
