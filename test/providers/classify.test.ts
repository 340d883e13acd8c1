import * as AnthropicSdk from "@anthropic-ai/sdk";
import * as OpenAISdk from "openai";
import { describe, expect, it } from "vitest";
import {
  CLASSIFIER_TEXT_EXAMPLES,
  classifyProviderError,
  classifySignal,
  kindOf,
  parseRetryAfterMs,
} from "../../shared/providers/classify";
import { OVERFLOW_EXAMPLES, overflowFacts } from "../../shared/providers/failure-details";
import { readFixture } from "../support/scripted-sse-server";

function recorded(path: string): { status: number; headers: Headers; body: object } {
  const raw = JSON.parse(readFixture(path)) as { status: number; headers: Record<string, string>; body: object };
  return { status: raw.status, headers: new Headers(raw.headers), body: raw.body };
}

/** Builds the exact error object the SDK would throw for a recorded response. */
function openAIError(path: string): unknown {
  const { status, headers, body } = recorded(path);
  return OpenAISdk.APIError.generate(status, body, undefined, headers);
}

function anthropicError(path: string): unknown {
  const { status, headers, body } = recorded(path);
  return AnthropicSdk.APIError.generate(status, body, undefined, headers);
}

describe("kindOf: evidence order", () => {
  it("lets insufficient_quota overrule the 429 status", () => {
    expect(kindOf({ status: 429, type: "insufficient_quota", code: "insufficient_quota", message: "You exceeded your current quota" })).toBe("billing");
  });

  it("lets context_length_exceeded overrule the generic 400", () => {
    expect(kindOf({ status: 400, type: "invalid_request_error", code: "context_length_exceeded", message: "too long" })).toBe("context_overflow");
  });

  it("uses the status over a contradicting message", () => {
    // A 401 whose text happens to mention the prompt length is still an auth failure.
    expect(kindOf({ status: 401, message: "prompt is too long" })).toBe("auth");
  });

  it("falls back to the error type when there is no status (in-stream errors)", () => {
    expect(kindOf({ type: "overloaded_error", message: "Overloaded" })).toBe("overloaded");
    expect(kindOf({ type: "rate_limit_error", message: "slow down" })).toBe("rate_limit");
    expect(kindOf({ type: "api_error", message: "Internal server error" })).toBe("server_error");
  });

  it("returns unknown when nothing matches", () => {
    expect(kindOf({ message: "something odd happened" })).toBe("unknown");
  });

  it.each(CLASSIFIER_TEXT_EXAMPLES.map(({ kind, example }) => [kind, example]))(
    "classifies the real provider message as %s: %s",
    (kind, example) => {
      expect(kindOf({ status: 400, type: "invalid_request_error", message: example })).toBe(kind);
    },
  );
});

describe("parseRetryAfterMs", () => {
  const now = Date.parse("2025-08-20T10:00:00Z");

  it.each([
    [{ "retry-after": "11" }, 11_000],
    [{ "retry-after": "1.5" }, 1_500],
    [{ "retry-after-ms": "250" }, 250],
    [{ "retry-after-ms": "250", "retry-after": "30" }, 250],
    [{ "retry-after": "Wed, 20 Aug 2025 10:00:30 GMT" }, 30_000],
    [{ "Retry-After": "7" }, 7_000],
  ])("parses %j", (headers, expected) => {
    expect(parseRetryAfterMs(headers, now)).toBe(expected);
  });

  it.each([
    [{}],
    [{ "retry-after": "0" }],
    [{ "retry-after": "-3" }],
    [{ "retry-after": "soon" }],
    [{ "retry-after": "Wed, 20 Aug 2025 09:59:00 GMT" }], // in the past
    [{ "retry-after": String(3 * 24 * 3600) }], // three days: a broken header, not advice
    [{ "retry-after-ms": "NaN" }],
  ])("ignores insane value %j", (headers) => {
    expect(parseRetryAfterMs(headers, now)).toBeUndefined();
  });

  it("reads fetch Headers as the SDKs expose them", () => {
    expect(parseRetryAfterMs(new Headers({ "retry-after": "4" }), now)).toBe(4_000);
  });
});

describe("classifySignal: rate limit windows", () => {
  it.each([
    ["60", "short", 60_000],
    ["61", "long", 61_000],
    [undefined, "short", undefined],
  ] as const)("retry-after %s -> %s window", (retryAfter, window, retryAfterMs) => {
    // Prepare
    const headers: Record<string, string> = retryAfter ? { "retry-after": retryAfter } : {};

    // Act
    const failure = classifySignal({ status: 429, message: "Too Many Requests", headers }, false);

    // Assess
    expect(failure).toMatchObject({ kind: "rate_limit", retryable: true, rateLimitWindow: window });
    expect(failure.retryAfterMs).toBe(retryAfterMs);
  });

  it("drops an absurd Retry-After but still calls the window long", () => {
    const failure = classifySignal({ status: 429, message: "Too Many Requests", headers: { "retry-after": String(3 * 24 * 3600) } }, false);
    expect(failure.retryAfterMs).toBeUndefined();
    expect(failure.rateLimitWindow).toBe("long");
  });

  it("does not attach a window to other kinds but keeps their Retry-After", () => {
    const failure = classifySignal({ status: 529, message: "Overloaded", headers: { "retry-after": "5" } }, true);
    expect(failure).toEqual({ kind: "overloaded", message: "Overloaded", status: 529, retryable: true, retryAfterMs: 5000, responseStarted: true });
  });
});

describe("overflowFacts: the provider's window and the rejected prompt's size", () => {
  it.each([
    ["This model's maximum context length is 128000 tokens. However, your messages resulted in 130532 tokens. Please reduce the length of the messages.", 128_000, 130_532],
    ["prompt is too long: 215000 tokens > 200000 maximum", 200_000, 215_000],
    ["input length and `max_tokens` exceed context limit: 197202 + 21333 > 200000, decrease input length or `max_tokens` and try again", 200_000, 197_202],
    ["This model's maximum context length is 16384 tokens. However, you requested 122946 tokens (112946 in the messages, 10000 in the completion). Please reduce the length of the messages or completion.", 16_384, 112_946],
    ["This model's maximum context length is 128000 tokens. However, you requested 65535 output tokens and your prompt contains at least 62466 input tokens, for a total of at least 128001 tokens.", 128_000, 62_466],
    ["This model's maximum context length is 4097 tokens, however you requested 4116 tokens (3860 in your prompt; 256 for the completion). Please reduce your prompt; or completion length.", 4097, 3860],
    ["request (4476 tokens) exceeds the available context size (4096 tokens), try increasing it", 4096, 4476],
    ["Input prompt (2664 tokens) is too long and exceeds limit of 2048", 2048, 2664],
  ])("%s", (message, maxContextTokens, promptTokens) => {
    expect(overflowFacts(message)).toEqual({ maxContextTokens, promptTokens });
    expect(kindOf({ status: 400, message })).toBe("context_overflow");
  });

  it("every documented example reads as an overflow", () => {
    for (const example of OVERFLOW_EXAMPLES) expect(kindOf({ status: 400, message: example })).toBe("context_overflow");
  });

  it("Ollama states no numbers: an overflow without facts", () => {
    const failure = classifySignal({ status: 400, message: "the input length exceeds the context length" }, false);
    expect(failure.kind).toBe("context_overflow");
    expect(failure.overflow).toBeUndefined();
  });
});

describe("classifyProviderError: real SDK errors", () => {
  it.each([
    ["openai/error-429-rate-limit.json", "rate_limit"],
    ["openai/error-429-insufficient-quota.json", "billing"],
    ["openai/error-400-context-length.json", "context_overflow"],
    ["openai/error-400-vllm-context-length.json", "context_overflow"],
    ["openai/error-401-invalid-api-key.json", "auth"],
    ["openai/error-404-model-not-found.json", "model_not_found"],
    ["openai/error-500-server.json", "server_error"],
  ] as const)("OpenAI %s -> %s", (path, kind) => {
    expect(classifyProviderError(openAIError(path), false).kind).toBe(kind);
  });

  it.each([
    ["anthropic/error-429-rate-limit.json", "rate_limit"],
    ["anthropic/error-529-overloaded.json", "overloaded"],
    ["anthropic/error-400-prompt-too-long.json", "context_overflow"],
    ["anthropic/error-400-credit-balance.json", "billing"],
    ["anthropic/error-401-authentication.json", "auth"],
  ] as const)("Anthropic %s -> %s", (path, kind) => {
    expect(classifyProviderError(anthropicError(path), false).kind).toBe(kind);
  });

  it.each([
    ["openai/error-400-context-length.json", { maxContextTokens: 128_000, promptTokens: 130_321 }],
    ["openai/error-400-vllm-context-length.json", { maxContextTokens: 32_768, promptTokens: 29_696 }],
    ["openai/error-400-llamacpp-context-size.json", { maxContextTokens: 4096, promptTokens: 4476 }],
  ] as const)("reads the overflow's numbers from %s", (path, overflow) => {
    expect(classifyProviderError(openAIError(path), false)).toMatchObject({ kind: "context_overflow", overflow });
  });

  it("reads Anthropic's overflow numbers", () => {
    expect(classifyProviderError(anthropicError("anthropic/error-400-prompt-too-long.json"), false)).toMatchObject({
      kind: "context_overflow",
      overflow: { maxContextTokens: 200_000, promptTokens: 208_310 },
    });
  });

  it("uses the provider's own message, not the SDK's JSON dump", () => {
    const failure = classifyProviderError(anthropicError("anthropic/error-400-prompt-too-long.json"), false);
    expect(failure.message).toBe("prompt is too long: 208310 tokens > 200000 maximum");
  });

  it("classifies Anthropic's in-stream error event (no status) by its type", () => {
    // Prepare: what the SDK throws for `event: error` mid-stream.
    const body = { type: "error", error: { type: "overloaded_error", message: "Overloaded" } };
    const error = new AnthropicSdk.APIError(undefined, body, undefined, new Headers(), "overloaded_error");

    // Act
    const failure = classifyProviderError(error, true);

    // Assess
    expect(failure).toEqual({ kind: "overloaded", message: "Overloaded", retryable: true, responseStarted: true });
  });

  it.each([
    [new OpenAISdk.APIUserAbortError(), "aborted", false],
    [new AnthropicSdk.APIUserAbortError(), "aborted", false],
    [new OpenAISdk.APIConnectionTimeoutError(), "timeout", true],
    [new AnthropicSdk.APIConnectionTimeoutError(), "timeout", true],
    [new OpenAISdk.APIConnectionError({ message: "Connection error." }), "server_error", true],
    [Object.assign(new TypeError("terminated"), { cause: Object.assign(new Error("other side closed"), { code: "UND_ERR_SOCKET" }) }), "server_error", true],
    [Object.assign(new Error("connect ETIMEDOUT 10.0.0.1:443"), { code: "ETIMEDOUT" }), "timeout", true],
    [new SyntaxError("Unexpected token < in JSON at position 0"), "server_error", true],
    [new Error("something else"), "unknown", true],
    ["a thrown string", "unknown", true],
  ] as const)("%s -> %s", (error, kind, retryable) => {
    expect(classifyProviderError(error, false)).toMatchObject({ kind, retryable, responseStarted: false });
  });
});
