import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createOpenAIChatProvider } from "../../shared/providers/openai-chat";
import type { ModelProvider } from "../../shared/providers/types";
import { chat, FakeOpenAIServer, openAIErrorBody } from "../support/fake-openai-server";
import { httpErrorFixture, sseFixture } from "../support/scripted-sse-server";
import { collect, endOf, errorOf, modelRequest, READ_FILE_TOOL, textDeltas, thinkingDeltas, toolCalls } from "./helpers";

let server: FakeOpenAIServer;
let provider: ModelProvider;

beforeEach(async () => {
  server = await FakeOpenAIServer.start();
  provider = createOpenAIChatProvider({ apiKey: "sk-test", baseURL: server.baseURL });
});

afterEach(async () => {
  await server.close();
});

describe("openai chat: streaming a reply", () => {
  it("replays a recorded text reply into deltas, a message, usage and a stop reason", async () => {
    // Prepare
    server.enqueue(sseFixture("openai/chat-text.sse"));

    // Act
    const events = await collect(provider.stream(modelRequest()));

    // Assess
    expect(textDeltas(events)).toEqual(["Hello", "!", " How", " can", " I", " help", "?"]);
    const end = endOf(events);
    expect(end.stopReason).toBe("stop");
    expect(end.message.rawStopReason).toBe("stop");
    expect(end.message.content).toEqual([{ type: "text", text: "Hello! How can I help?" }]);
    expect(end.message.provider).toBe("openai");
    expect(end.message.model).toBe("test-model");
    // prompt_tokens 2006 of which 1920 cached: input counts only the uncached part.
    expect(end.usage).toEqual({ input: 86, output: 9, cacheRead: 1920, cacheWrite: 0 });
  });

  it("sends a streaming request with usage, tools, system prompt and the key", async () => {
    // Prepare
    server.enqueue(chat.text("ok"));

    // Act
    await collect(provider.stream(modelRequest({ tools: [READ_FILE_TOOL], maxOutputTokens: 300 })));

    // Assess
    const received = server.lastRequest!;
    expect(received.path).toBe("/v1/chat/completions");
    expect(received.headers.authorization).toBe("Bearer sk-test");
    expect(received.body).toMatchObject({
      model: "test-model",
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 300, // a custom baseURL means an OpenAI-compatible server
      messages: [
        { role: "system", content: "You are terse." },
        { role: "user", content: "Hi" },
      ],
      tools: [{ type: "function", function: { name: "read_file", description: READ_FILE_TOOL.description, parameters: READ_FILE_TOOL.parameters } }],
    });
  });
});

describe("openai chat: tool calls", () => {
  it("assembles recorded parallel tool calls by index and ends with tool_calls", async () => {
    // Prepare
    server.enqueue(sseFixture("openai/chat-parallel-tool-calls.sse"));

    // Act
    const events = await collect(provider.stream(modelRequest()));

    // Assess
    expect(toolCalls(events)).toEqual([
      { type: "tool-call", id: "call_DdmO9pD3xa9XTPNJ32zg2hcA", name: "get_weather", args: { location: "Paris, France" } },
      { type: "tool-call", id: "call_ABgZkU1Wq6n3bT8vEoXc5rLf", name: "get_weather", args: { location: "Bogotá, Colombia" } },
    ]);
    const end = endOf(events);
    expect(end.stopReason).toBe("tool_calls");
    expect(end.message.content.map((b) => b.type)).toEqual(["tool_call", "tool_call"]);
  });

  it("keeps malformed argument JSON as `_raw` instead of throwing", async () => {
    // Prepare
    server.enqueue(chat.toolCalls([{ id: "call_1", name: "read_file", args: '{"path": "src/ma' }]));

    // Act
    const events = await collect(provider.stream(modelRequest()));

    // Assess
    expect(toolCalls(events)[0].args).toEqual({ _raw: '{"path": "src/ma' });
    expect(endOf(events).stopReason).toBe("tool_calls");
  });

  it("separates calls that a compatible server sends all with index 0", async () => {
    // Prepare: two complete calls, both index 0, distinguished only by id (seen from Gemini-compatible endpoints).
    const frame = (delta: unknown, finish: string | null = null) =>
      `data: ${JSON.stringify({ id: "x", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    const body = [
      frame({ tool_calls: [{ index: 0, id: "call_a", type: "function", function: { name: "read_file", arguments: '{"path":"a"}' } }] }),
      frame({ tool_calls: [{ index: 0, id: "call_b", type: "function", function: { name: "read_file", arguments: '{"path":"b"}' } }] }),
      frame({}, "tool_calls"),
      "data: [DONE]\n\n",
    ].join("");
    server.enqueue({ kind: "sse", body });

    // Act
    const events = await collect(provider.stream(modelRequest()));

    // Assess
    expect(toolCalls(events).map((c) => [c.id, c.args])).toEqual([
      ["call_a", { path: "a" }],
      ["call_b", { path: "b" }],
    ]);
  });

  it("reports tool_calls even when the server says `stop` after calls (Ollama), keeping the raw value", async () => {
    // Prepare
    server.enqueue(chat.stream({ toolCalls: [{ name: "read_file", args: { path: "a" } }], finishReason: "stop" }));

    // Act
    const end = endOf(await collect(provider.stream(modelRequest())));

    // Assess
    expect(end.stopReason).toBe("tool_calls");
    expect(end.message.rawStopReason).toBe("stop");
  });
});

describe("openai chat: reasoning, stop reasons, refusals", () => {
  it("turns vLLM `reasoning_content` into thinking before the text", async () => {
    // Prepare
    server.enqueue(sseFixture("openai/chat-reasoning-vllm.sse"));

    // Act
    const events = await collect(provider.stream(modelRequest()));

    // Assess
    expect(thinkingDeltas(events)).toEqual(["The user", " asks for 2+2."]);
    const end = endOf(events);
    expect(end.message.content).toEqual([
      { type: "thinking", text: "The user asks for 2+2." },
      { type: "text", text: "2 + 2 = 4." },
    ]);
    expect(end.usage).toEqual({ input: 14, output: 17, cacheRead: 0, cacheWrite: 0 });
  });

  it("accepts Ollama's `reasoning` field as thinking too", async () => {
    // Prepare
    server.enqueue(chat.stream({ reasoning: "Short thought.", reasoningField: "reasoning", text: "Answer." }));

    // Act
    const events = await collect(provider.stream(modelRequest()));

    // Assess
    expect(thinkingDeltas(events).join("")).toBe("Short thought.");
  });

  it.each([
    ["length", "length"],
    ["content_filter", "content_filter"],
    ["stop", "stop"],
  ] as const)("maps finish_reason %s to %s and keeps the raw value", async (raw, expected) => {
    // Prepare
    server.enqueue(chat.stream({ text: "partial", finishReason: raw }));

    // Act
    const end = endOf(await collect(provider.stream(modelRequest())));

    // Assess
    expect(end.stopReason).toBe(expected);
    expect(end.message.rawStopReason).toBe(raw);
  });

  it("streams a refusal as text and ends with stop reason refusal", async () => {
    // Prepare
    server.enqueue(chat.stream({ refusal: "I'm sorry, I can't help with that." }));

    // Act
    const end = endOf(await collect(provider.stream(modelRequest())));

    // Assess
    expect(end.stopReason).toBe("refusal");
    expect(end.message.content).toEqual([{ type: "text", text: "I'm sorry, I can't help with that." }]);
  });
});

describe("openai chat: HTTP errors are classified, never thrown", () => {
  it.each([
    ["openai/error-429-rate-limit.json", "rate_limit", true],
    ["openai/error-429-insufficient-quota.json", "billing", false],
    ["openai/error-400-context-length.json", "context_overflow", false],
    ["openai/error-400-vllm-context-length.json", "context_overflow", false],
    ["openai/error-401-invalid-api-key.json", "auth", false],
    ["openai/error-404-model-not-found.json", "model_not_found", false],
    ["openai/error-500-server.json", "server_error", true],
  ] as const)("%s -> %s", async (fixture, kind, retryable) => {
    // Prepare
    server.enqueue(httpErrorFixture(fixture));

    // Act
    const error = errorOf(await collect(provider.stream(modelRequest())));

    // Assess
    expect(error.failure.kind).toBe(kind);
    expect(error.failure.retryable).toBe(retryable);
    expect(error.failure.responseStarted).toBe(false);
    expect(error.partial).toMatchObject({ role: "assistant", content: [], stopReason: "error" });
    expect(server.requests).toHaveLength(1); // maxRetries: 0, the runner decides
  });

  it.each([
    [403, "auth_permanent"],
    [402, "billing"],
    [408, "timeout"],
    [422, "format"],
    [502, "server_error"],
    [503, "overloaded"],
  ] as const)("status %i -> %s", async (status, kind) => {
    // Prepare
    server.enqueue(chat.error(status, openAIErrorBody("upstream said no", "invalid_request_error")));

    // Act
    const error = errorOf(await collect(provider.stream(modelRequest())));

    // Assess
    expect(error.failure).toMatchObject({ kind, status });
  });

  it("reads the wait from the 429 message when no Retry-After header is sent", async () => {
    // Prepare
    server.enqueue(httpErrorFixture("openai/error-429-rate-limit.json"));

    // Act
    const { failure } = errorOf(await collect(provider.stream(modelRequest())));

    // Assess: "Please try again in 1.58s."
    expect(failure).toMatchObject({ kind: "rate_limit", retryAfterMs: 1580, rateLimitWindow: "short", status: 429 });
  });

  it.each([
    [{ "retry-after": "20" }, 20_000, "short"],
    [{ "retry-after-ms": "250", "retry-after": "9" }, 250, "short"],
    [{ "retry-after": "3600" }, 3_600_000, "long"],
    [{ "retry-after": "-5" }, undefined, "short"],
  ] as const)("honours Retry-After headers %j", async (headers, retryAfterMs, window) => {
    // Prepare
    server.enqueue(chat.error(429, openAIErrorBody("Rate limit reached for requests", "requests", "rate_limit_exceeded"), headers));

    // Act
    const { failure } = errorOf(await collect(provider.stream(modelRequest())));

    // Assess
    expect(failure.retryAfterMs).toBe(retryAfterMs);
    expect(failure.rateLimitWindow).toBe(window);
  });
});

describe("openai chat: failures after the response started", () => {
  it("classifies an error object sent inside the stream and keeps the partial text", async () => {
    // Prepare
    server.enqueue(chat.midStreamError({ text: "Partial answer" }, { message: "The server had an error while processing your request.", type: "server_error" }));

    // Act
    const error = errorOf(await collect(provider.stream(modelRequest())));

    // Assess
    expect(error.failure).toMatchObject({ kind: "server_error", retryable: true, responseStarted: true });
    expect(error.partial.content).toEqual([{ type: "text", text: "Partial answer" }]);
  });

  it("turns a dropped connection into a retryable server_error with the partial message", async () => {
    // Prepare
    server.enqueue(chat.drop({ text: "Half of it", toolCalls: [{ name: "read_file", args: { path: "a" } }] }));

    // Act
    const error = errorOf(await collect(provider.stream(modelRequest())));

    // Assess: the unfinished tool call is not in the partial (it could not be executed safely).
    expect(error.failure).toMatchObject({ kind: "server_error", retryable: true, responseStarted: true });
    expect(error.partial.content).toEqual([{ type: "text", text: "Half of it" }]);
  });

  it("ends with a timeout when the server stalls longer than idleTimeoutMs", async () => {
    // Prepare
    // The fake stays silent until teardown: the watchdog is the only way this stream can end.
    server.enqueue(chat.stall({ text: "Thinking about" }));

    // Act
    // Long enough that the partial frames always land first on a loaded machine (the assertion needs them).
    const error = errorOf(await collect(provider.stream(modelRequest({ idleTimeoutMs: 1_000 }))));

    // Assess
    expect(error.failure).toMatchObject({ kind: "timeout", retryable: true, responseStarted: true });
    expect(error.partial.content).toEqual([{ type: "text", text: "Thinking about" }]);
  });

  it("times out a stream that sends headers but never a chunk", async () => {
    // Prepare
    server.enqueue(chat.stall());

    // Act
    const error = errorOf(await collect(provider.stream(modelRequest({ idleTimeoutMs: 150 }))));

    // Assess
    expect(error.failure).toMatchObject({ kind: "timeout", responseStarted: false });
  });

  it("ends with aborted when the caller aborts mid-stream", async () => {
    // Prepare
    server.enqueue(chat.stall({ text: "Working on" }));
    const controller = new AbortController();
    const events = [];

    // Act
    for await (const event of provider.stream(modelRequest({ signal: controller.signal }))) {
      events.push(event);
      if (event.type === "text-delta") controller.abort();
    }

    // Assess
    const error = errorOf(events);
    expect(error.failure).toMatchObject({ kind: "aborted", retryable: false, responseStarted: true });
    expect(error.partial.stopReason).toBe("aborted");
  });

  it("does not call the server when the signal is already aborted", async () => {
    // Prepare
    const controller = new AbortController();
    controller.abort();

    // Act
    const error = errorOf(await collect(provider.stream(modelRequest({ signal: controller.signal }))));

    // Assess
    expect(error.failure.kind).toBe("aborted");
    expect(server.requests).toHaveLength(0);
  });

  it("classifies a refused connection as a retryable server_error", async () => {
    // Prepare
    const baseURL = server.baseURL;
    await server.close();
    const offline = createOpenAIChatProvider({ apiKey: "sk-test", baseURL });

    // Act
    const error = errorOf(await collect(offline.stream(modelRequest())));

    // Assess
    expect(error.failure).toMatchObject({ kind: "server_error", retryable: true, responseStarted: false });
    server = await FakeOpenAIServer.start(); // afterEach closes it
  });
});
