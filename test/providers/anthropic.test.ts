import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createAnthropicProvider, DEFAULT_MAX_TOKENS } from "../../shared/providers/anthropic";
import type { ModelProvider } from "../../shared/providers/types";
import { FakeAnthropicServer, messages } from "../support/fake-anthropic-server";
import { httpErrorFixture, sseFixture } from "../support/scripted-sse-server";
import { collect, endOf, errorOf, modelRequest, READ_FILE_TOOL, textDeltas, thinkingDeltas, toolCalls } from "./helpers";

let server: FakeAnthropicServer;
let provider: ModelProvider;

beforeEach(async () => {
  server = await FakeAnthropicServer.start();
  provider = createAnthropicProvider({ apiKey: "sk-ant-test", baseURL: server.baseURL });
});

afterEach(async () => {
  await server.close();
});

describe("anthropic: streaming", () => {
  it("replays a recorded text reply with cache read/write usage", async () => {
    // Prepare
    server.enqueue(sseFixture("anthropic/messages-text.sse"));

    // Act
    const events = await collect(provider.stream(modelRequest()));

    // Assess
    expect(textDeltas(events)).toEqual(["Hello", "! How can I help you today?"]);
    const end = endOf(events);
    expect(end.stopReason).toBe("stop");
    expect(end.message.rawStopReason).toBe("end_turn");
    expect(end.message.provider).toBe("anthropic");
    expect(end.usage).toEqual({ input: 12, output: 12, cacheRead: 2048, cacheWrite: 1024 });
  });

  it("sends system separately, tools with input_schema, default max_tokens and the key", async () => {
    // Prepare
    server.enqueue(messages.text("ok"));

    // Act
    await collect(provider.stream(modelRequest({ tools: [READ_FILE_TOOL] })));

    // Assess
    const received = server.lastRequest!;
    expect(received.path).toBe("/v1/messages");
    // SDK 1.x sends the API key as a bearer token (older SDKs used x-api-key).
    expect(received.headers.authorization).toBe("Bearer sk-ant-test");
    expect(received.headers["anthropic-version"]).toBeDefined();
    expect(received.body).toMatchObject({
      model: "test-model",
      max_tokens: DEFAULT_MAX_TOKENS,
      stream: true,
      system: "You are terse.",
      messages: [{ role: "user", content: [{ type: "text", text: "Hi" }] }],
      tools: [{ name: "read_file", description: READ_FILE_TOOL.description, input_schema: READ_FILE_TOOL.parameters }],
    });
  });

  it("uses maxOutputTokens when given", async () => {
    // Prepare
    server.enqueue(messages.text("ok"));

    // Act
    await collect(provider.stream(modelRequest({ maxOutputTokens: 123 })));

    // Assess
    expect(server.lastRequest!.body).toMatchObject({ max_tokens: 123 });
  });

  it("replays a recorded tool_use with streamed input JSON after the text", async () => {
    // Prepare
    server.enqueue(sseFixture("anthropic/messages-tool-use.sse"));

    // Act
    const events = await collect(provider.stream(modelRequest()));

    // Assess
    expect(toolCalls(events)).toEqual([
      { type: "tool-call", id: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", name: "get_weather", args: { location: "San Francisco, CA", unit: "fahrenheit" } },
    ]);
    const end = endOf(events);
    expect(end.stopReason).toBe("tool_calls");
    expect(end.message.content.map((b) => b.type)).toEqual(["text", "tool_call"]);
    expect(end.usage).toEqual({ input: 472, output: 89, cacheRead: 0, cacheWrite: 0 });
  });

  it("emits parallel tool uses in block order and keeps malformed input as _raw", async () => {
    // Prepare
    server.enqueue(
      messages.toolUses([
        { id: "toolu_a", name: "read_file", input: { path: "a" } },
        { id: "toolu_b", name: "read_file", input: '{"path": "b' },
      ]),
    );

    // Act
    const events = await collect(provider.stream(modelRequest()));

    // Assess
    expect(toolCalls(events).map((c) => [c.id, c.args])).toEqual([
      ["toolu_a", { path: "a" }],
      ["toolu_b", { _raw: '{"path": "b' }],
    ]);
  });

  it("replays recorded thinking with its signature", async () => {
    // Prepare
    server.enqueue(sseFixture("anthropic/messages-thinking.sse"));

    // Act
    const events = await collect(provider.stream(modelRequest()));

    // Assess
    expect(thinkingDeltas(events).join("")).toBe("Let me solve this step by step:\n\n1. First break down 27 * 453\n2. 453 = 400 + 50 + 3");
    const [thinking, text] = endOf(events).message.content;
    expect(thinking).toMatchObject({ type: "thinking", signature: expect.stringMatching(/^EqQBCgIYAhIM/) });
    expect(text).toEqual({ type: "text", text: "27 * 453 = 12,231" });
  });

  it.each([
    ["end_turn", "stop"],
    ["stop_sequence", "stop"],
    ["max_tokens", "length"],
    ["tool_use", "tool_calls"],
    ["refusal", "refusal"],
    ["pause_turn", "stop"],
  ] as const)("maps stop_reason %s to %s and keeps the raw value", async (raw, expected) => {
    // Prepare
    server.enqueue(messages.stream({ text: "x", stopReason: raw }));

    // Act
    const end = endOf(await collect(provider.stream(modelRequest())));

    // Assess
    expect(end.stopReason).toBe(expected);
    expect(end.message.rawStopReason).toBe(raw);
  });
});

describe("anthropic: failures", () => {
  it.each([
    ["anthropic/error-429-rate-limit.json", "rate_limit", true],
    ["anthropic/error-529-overloaded.json", "overloaded", true],
    ["anthropic/error-400-prompt-too-long.json", "context_overflow", false],
    ["anthropic/error-400-credit-balance.json", "billing", false],
    ["anthropic/error-401-authentication.json", "auth", false],
  ] as const)("%s -> %s", async (fixture, kind, retryable) => {
    // Prepare
    server.enqueue(httpErrorFixture(fixture));

    // Act
    const error = errorOf(await collect(provider.stream(modelRequest())));

    // Assess
    expect(error.failure).toMatchObject({ kind, retryable, responseStarted: false });
    expect(server.requests).toHaveLength(1); // maxRetries: 0
  });

  it("keeps the provider's message and honours retry-after seconds on a 429", async () => {
    // Prepare
    server.enqueue(httpErrorFixture("anthropic/error-429-rate-limit.json"));

    // Act
    const { failure } = errorOf(await collect(provider.stream(modelRequest())));

    // Assess
    expect(failure).toMatchObject({ status: 429, retryAfterMs: 11_000, rateLimitWindow: "short" });
    expect(failure.message).toMatch(/^This request would exceed the rate limit/);
  });

  it("marks a rate limit with a long Retry-After date as a long window", async () => {
    // Prepare
    const inTwoHours = new Date(Date.now() + 2 * 3600_000).toUTCString();
    server.enqueue(messages.error(429, "rate_limit_error", "Number of request tokens has exceeded your daily rate limit", { "retry-after": inTwoHours }));

    // Act
    const { failure } = errorOf(await collect(provider.stream(modelRequest())));

    // Assess
    expect(failure.rateLimitWindow).toBe("long");
    expect(failure.retryAfterMs).toBeGreaterThan(60_000);
  });

  it.each([
    [403, "permission_error", "Your API key does not have permission to use the specified resource.", "auth_permanent"],
    [404, "not_found_error", "model: claude-opus-9", "model_not_found"],
    [500, "api_error", "Internal server error", "server_error"],
    [400, "invalid_request_error", "messages.1.content.0.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'", "format"],
    [413, "request_too_large", "Request exceeds the maximum allowed number of bytes.", "context_overflow"],
    [402, "billing_error", "Your organization has an outstanding balance.", "billing"],
    [504, "timeout_error", "Request timed out", "timeout"],
  ] as const)("status %i %s -> %s", async (status, type, message, kind) => {
    // Prepare
    server.enqueue(messages.error(status, type, message));

    // Act
    const { failure } = errorOf(await collect(provider.stream(modelRequest())));

    // Assess
    expect(failure).toMatchObject({ kind, status, message });
  });

  it("classifies a recorded in-stream overloaded_error and keeps the partial text", async () => {
    // Prepare
    server.enqueue(sseFixture("anthropic/messages-overloaded-midstream.sse"));

    // Act
    const error = errorOf(await collect(provider.stream(modelRequest())));

    // Assess
    expect(error.failure).toMatchObject({ kind: "overloaded", retryable: true, responseStarted: true, message: "Overloaded" });
    expect(error.failure.status).toBeUndefined();
    expect(error.partial.content).toEqual([{ type: "text", text: "Let me look at" }]);
    expect(error.partial.usage.input).toBe(1630);
  });

  it("treats a body that ends without message_stop as cut off, keeping tool uses whose block completed", async () => {
    // Prepare
    server.enqueue(messages.drop({ text: "Reading", toolUses: [{ name: "read_file", input: { path: "a" } }] }));

    // Act
    const error = errorOf(await collect(provider.stream(modelRequest())));

    // Assess
    expect(error.failure).toMatchObject({ kind: "server_error", retryable: true, responseStarted: true });
    expect(error.partial.content.map((b) => b.type)).toEqual(["text", "tool_call"]);
  });

  it("leaves a tool use whose input was still streaming out of the partial message", async () => {
    // Prepare: the connection dies inside the tool_use block.
    const frame = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
    const body = [
      frame("message_start", { message: { id: "msg_1", type: "message", role: "assistant", model: "m", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 9, output_tokens: 1 } } }),
      frame("content_block_start", { index: 0, content_block: { type: "text", text: "" } }),
      frame("content_block_delta", { index: 0, delta: { type: "text_delta", text: "Reading" } }),
      frame("content_block_stop", { index: 0 }),
      frame("content_block_start", { index: 1, content_block: { type: "tool_use", id: "toolu_x", name: "read_file", input: {} } }),
      frame("content_block_delta", { index: 1, delta: { type: "input_json_delta", partial_json: '{"pa' } }),
    ].join("");
    server.enqueue({ kind: "drop", body });

    // Act
    const events = await collect(provider.stream(modelRequest()));

    // Assess
    expect(toolCalls(events)).toEqual([]);
    expect(errorOf(events).partial.content).toEqual([{ type: "text", text: "Reading" }]);
  });

  it("times out on a stall after the first events", async () => {
    // Prepare
    server.enqueue(messages.stall({ text: "Hmm" }));

    // Act
    // Long enough that the partial frames always land first on a loaded machine (the assertion needs them).
    const error = errorOf(await collect(provider.stream(modelRequest({ idleTimeoutMs: 1_000 }))));

    // Assess
    expect(error.failure).toMatchObject({ kind: "timeout", responseStarted: true });
    expect(error.partial.content).toEqual([{ type: "text", text: "Hmm" }]);
  });

  it("ends with aborted when the caller aborts", async () => {
    // Prepare
    server.enqueue(messages.stall({ text: "Hmm" }));
    const controller = new AbortController();
    const events = [];

    // Act
    for await (const event of provider.stream(modelRequest({ signal: controller.signal }))) {
      events.push(event);
      if (event.type === "text-delta") controller.abort();
    }

    // Assess
    expect(errorOf(events).failure).toMatchObject({ kind: "aborted", retryable: false });
    expect(errorOf(events).partial.stopReason).toBe("aborted");
  });
});
