import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createOpenAIResponsesProvider } from "../../shared/providers/openai-responses";
import type { ModelProvider } from "../../shared/providers/types";
import type { Message } from "../../shared/core/messages";
import { FakeOpenAIServer, openAIErrorBody, responses, responsesStreamBody } from "../support/fake-openai-server";
import { httpErrorFixture, sseFixture } from "../support/scripted-sse-server";
import { collect, endOf, errorOf, modelRequest, READ_FILE_TOOL, textDeltas, thinkingDeltas, toolCalls } from "./helpers";

let server: FakeOpenAIServer;
let provider: ModelProvider;

beforeEach(async () => {
  server = await FakeOpenAIServer.start();
  provider = createOpenAIResponsesProvider({ apiKey: "sk-test", baseURL: server.baseURL });
});

afterEach(async () => {
  await server.close();
});

describe("openai responses: streaming", () => {
  it("streams output_text deltas and reads usage from response.completed", async () => {
    // Prepare
    server.enqueue(responses.stream({ text: "Hello there, friend.", usage: { input: 1200, output: 5, cached: 1024 } }));

    // Act
    const events = await collect(provider.stream(modelRequest()));

    // Assess
    expect(textDeltas(events)).toEqual(["Hello ", "there, ", "friend."]);
    const end = endOf(events);
    expect(end.stopReason).toBe("stop");
    expect(end.message.rawStopReason).toBe("completed");
    expect(end.message.provider).toBe("openai-responses");
    expect(end.message.content).toEqual([{ type: "text", text: "Hello there, friend." }]);
    expect(end.usage).toEqual({ input: 176, output: 5, cacheRead: 1024, cacheWrite: 0 });
  });

  it("sends instructions, input items, function tools and store:false", async () => {
    // Prepare
    server.enqueue(responses.text("ok"));
    const history: Message[] = [
      { role: "user", content: "Read a" },
      {
        role: "assistant",
        content: [{ type: "tool_call", id: "call_1", name: "read_file", args: { path: "a" } }],
        provider: "openai-responses",
        model: "gpt-4.1",
        stopReason: "tool_calls",
        usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0 },
      },
      { role: "tool_result", toolCallId: "call_1", toolName: "read_file", content: "contents of a", isError: false },
    ];

    // Act
    await collect(provider.stream(modelRequest({ messages: history, tools: [READ_FILE_TOOL], maxOutputTokens: 500 })));

    // Assess
    const received = server.lastRequest!;
    expect(received.path).toBe("/v1/responses");
    expect(received.body).toMatchObject({
      model: "test-model",
      instructions: "You are terse.",
      stream: true,
      store: false,
      max_output_tokens: 500,
      input: [
        { role: "user", content: "Read a" },
        { type: "function_call", call_id: "call_1", name: "read_file", arguments: '{"path":"a"}' },
        { type: "function_call_output", call_id: "call_1", output: "contents of a" },
      ],
      tools: [{ type: "function", name: "read_file", parameters: READ_FILE_TOOL.parameters, strict: false }],
    });
  });

  it("replays a recorded function call: call_id, streamed arguments, tool_calls stop", async () => {
    // Prepare
    server.enqueue(sseFixture("openai/responses-function-call.sse"));

    // Act
    const events = await collect(provider.stream(modelRequest()));

    // Assess
    expect(toolCalls(events)).toEqual([
      { type: "tool-call", id: "call_kx1pQ7vRb2mWn9sT4yLcE1dZ", name: "get_weather", args: { location: "Paris, France" } },
    ]);
    const end = endOf(events);
    expect(end.stopReason).toBe("tool_calls");
    expect(end.usage).toEqual({ input: 291, output: 23, cacheRead: 0, cacheWrite: 0 });
  });

  it("emits parallel function calls in output order", async () => {
    // Prepare
    server.enqueue(
      responses.stream({
        functionCalls: [
          { callId: "call_a", name: "read_file", args: { path: "a" } },
          { callId: "call_b", name: "read_file", args: { path: "b" } },
        ],
      }),
    );

    // Act
    const events = await collect(provider.stream(modelRequest()));

    // Assess
    expect(toolCalls(events).map((c) => [c.id, c.args])).toEqual([
      ["call_a", { path: "a" }],
      ["call_b", { path: "b" }],
    ]);
  });

  it("turns reasoning summary deltas into thinking ahead of the text", async () => {
    // Prepare
    server.enqueue(responses.stream({ reasoningSummary: ["**Planning** ", "the answer."], text: "42" }));

    // Act
    const events = await collect(provider.stream(modelRequest()));

    // Assess
    expect(thinkingDeltas(events)).toEqual(["**Planning** ", "the answer."]);
    expect(endOf(events).message.content).toEqual([
      { type: "thinking", text: "**Planning** the answer." },
      { type: "text", text: "42" },
    ]);
  });

  it.each([
    ["max_output_tokens", "length"],
    ["content_filter", "content_filter"],
  ] as const)("maps response.incomplete (%s) to %s", async (reason, stopReason) => {
    // Prepare
    server.enqueue(responses.stream({ text: "cut", status: "incomplete", incompleteReason: reason }));

    // Act
    const end = endOf(await collect(provider.stream(modelRequest())));

    // Assess
    expect(end.stopReason).toBe(stopReason);
    expect(end.message.rawStopReason).toBe(reason);
  });

  it("streams a refusal as text with stop reason refusal", async () => {
    // Prepare
    server.enqueue(responses.stream({ refusal: "I can't help with that." }));

    // Act
    const end = endOf(await collect(provider.stream(modelRequest())));

    // Assess
    expect(end.stopReason).toBe("refusal");
    expect(end.message.content).toEqual([{ type: "text", text: "I can't help with that." }]);
  });
});

describe("openai responses: failures", () => {
  it("classifies response.failed by its error code and keeps the partial text", async () => {
    // Prepare
    server.enqueue(
      responses.stream({
        text: "Starting",
        status: "failed",
        error: { code: "server_error", message: "An error occurred while processing your request." },
      }),
    );

    // Act
    const error = errorOf(await collect(provider.stream(modelRequest())));

    // Assess
    expect(error.failure).toMatchObject({ kind: "server_error", retryable: true, responseStarted: true });
    expect(error.partial.content).toEqual([{ type: "text", text: "Starting" }]);
  });

  it("classifies a rate limit reported by response.failed", async () => {
    // Prepare
    server.enqueue(responses.stream({ status: "failed", error: { code: "rate_limit_exceeded", message: "Rate limit reached for gpt-4.1." } }));

    // Act
    const { failure } = errorOf(await collect(provider.stream(modelRequest())));

    // Assess
    expect(failure).toMatchObject({ kind: "rate_limit", rateLimitWindow: "short", responseStarted: false });
  });

  it("classifies an in-stream `error` event by its code", async () => {
    // Prepare
    server.enqueue(responses.errorEvent({ text: "Hi" }, "context_length_exceeded", "Your input exceeds the context window of this model."));

    // Act
    const error = errorOf(await collect(provider.stream(modelRequest())));

    // Assess
    expect(error.failure).toMatchObject({ kind: "context_overflow", retryable: false, responseStarted: true });
  });

  it.each([
    ["openai/error-429-insufficient-quota.json", "billing"],
    ["openai/error-400-context-length.json", "context_overflow"],
    ["openai/error-401-invalid-api-key.json", "auth"],
  ] as const)("classifies HTTP error %s as %s", async (fixture, kind) => {
    // Prepare
    server.enqueue(httpErrorFixture(fixture, "/v1/responses"));

    // Act
    const { failure } = errorOf(await collect(provider.stream(modelRequest())));

    // Assess
    expect(failure.kind).toBe(kind);
    expect(server.requests).toHaveLength(1);
  });

  it("passes Retry-After through on an overloaded 503", async () => {
    // Prepare
    server.enqueue(responses.error(503, openAIErrorBody("The engine is currently overloaded, please try again later.", "server_error"), { "retry-after": "2" }));

    // Act
    const { failure } = errorOf(await collect(provider.stream(modelRequest())));

    // Assess
    expect(failure).toMatchObject({ kind: "overloaded", retryable: true, retryAfterMs: 2000 });
  });

  it("treats a stream that closes before response.completed as cut off", async () => {
    // Prepare: all content, but the terminal event never comes and the server ends the body cleanly.
    server.enqueue({ kind: "sse", path: "/v1/responses", body: responsesStreamBody({ text: "All of it", truncate: true }) });

    // Act
    const error = errorOf(await collect(provider.stream(modelRequest())));

    // Assess
    expect(error.failure).toMatchObject({ kind: "server_error", responseStarted: true });
    expect(error.partial.content).toEqual([{ type: "text", text: "All of it" }]);
  });

  it("times out on a stall and aborts on the caller's signal", async () => {
    // Prepare
    server.enqueue(responses.stall({ text: "Slow" }), responses.stall());
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);

    // Act
    // Long enough that the partial frames always land first on a loaded machine (the assertion needs them).
    const timedOut = errorOf(await collect(provider.stream(modelRequest({ idleTimeoutMs: 1_000 }))));
    const aborted = errorOf(await collect(provider.stream(modelRequest({ signal: controller.signal, idleTimeoutMs: 5000 }))));

    // Assess
    expect(timedOut.failure).toMatchObject({ kind: "timeout", responseStarted: true });
    expect(aborted.failure).toMatchObject({ kind: "aborted", responseStarted: false });
  });
});
