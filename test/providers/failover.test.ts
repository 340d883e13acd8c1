/**
 * Mid-session failover through the real adapters: a transcript written by one
 * provider is replayed to another, and the receiving fake server checks what a
 * real API would reject.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Message } from "../../shared/core/messages";
import { createAnthropicProvider } from "../../shared/providers/anthropic";
import { createOpenAIChatProvider } from "../../shared/providers/openai-chat";
import { FakeAnthropicServer, messages } from "../support/fake-anthropic-server";
import { chat, FakeOpenAIServer } from "../support/fake-openai-server";
import { collect, endOf, errorOf, modelRequest } from "./helpers";

let openai: FakeOpenAIServer;
let anthropic: FakeAnthropicServer;

beforeEach(async () => {
  [openai, anthropic] = await Promise.all([FakeOpenAIServer.start(), FakeAnthropicServer.start()]);
});

afterEach(async () => {
  await Promise.all([openai.close(), anthropic.close()]);
});

describe("failover between providers", () => {
  it("continues an OpenAI-compatible tool turn on Anthropic after a 529", async () => {
    // Prepare: a vLLM-served model calls two tools with ids Anthropic would reject.
    const vllm = createOpenAIChatProvider({ apiKey: "none", baseURL: openai.baseURL });
    const claude = createAnthropicProvider({ apiKey: "sk-ant-test", baseURL: anthropic.baseURL });
    openai.enqueue(
      chat.stream({
        reasoning: "Read both files.",
        toolCalls: [
          { id: "functions.read_file:0", name: "read_file", args: { path: "a" } },
          { id: "functions.read_file:1", name: "read_file", args: { path: "b" } },
        ],
      }),
    );
    anthropic.enqueue(messages.error(529, "overloaded_error", "Overloaded"), messages.text("a and b differ."));
    const first = endOf(await collect(vllm.stream(modelRequest())));
    const history: Message[] = [
      { role: "user", content: "Hi" },
      first.message,
      { role: "tool_result", toolCallId: "functions.read_file:0", toolName: "read_file", content: "A", isError: false },
      { role: "tool_result", toolCallId: "functions.read_file:1", toolName: "read_file", content: "B", isError: false },
    ];

    // Act
    const overloaded = errorOf(await collect(claude.stream(modelRequest({ messages: history }))));
    const answer = endOf(await collect(claude.stream(modelRequest({ messages: history }))));

    // Assess
    expect(overloaded.failure).toMatchObject({ kind: "overloaded", retryable: true, status: 529 });
    expect(answer.message.content).toEqual([{ type: "text", text: "a and b differ." }]);
    const sent = anthropic.lastRequest!.body as { messages: Array<{ role: string; content: Array<Record<string, unknown>> }> };
    expect(sent.messages.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    const useIds = sent.messages[1].content.map((b) => b.id);
    const resultIds = sent.messages[2].content.map((b) => b.tool_use_id);
    expect(sent.messages[1].content.map((b) => b.type)).toEqual(["tool_use", "tool_use"]); // reasoning without signature dropped
    for (const id of useIds) expect(id).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    expect(resultIds).toEqual(useIds);
  });

  it("replays an Anthropic turn to OpenAI without its signed thinking", async () => {
    // Prepare
    const claude = createAnthropicProvider({ apiKey: "sk-ant-test", baseURL: anthropic.baseURL });
    const gpt = createOpenAIChatProvider({ apiKey: "sk-test", baseURL: openai.baseURL });
    anthropic.enqueue(messages.stream({ thinking: { text: "Check a.", signature: "EqQBsig" }, toolUses: [{ id: "toolu_01A", name: "read_file", input: { path: "a" } }] }));
    openai.enqueue(chat.text("Done."));
    const first = endOf(await collect(claude.stream(modelRequest())));
    const history: Message[] = [
      { role: "user", content: "Hi" },
      first.message,
      { role: "tool_result", toolCallId: "toolu_01A", toolName: "read_file", content: "A", isError: false },
    ];

    // Act
    endOf(await collect(gpt.stream(modelRequest({ messages: history }))));

    // Assess
    const sent = openai.lastRequest!.body as { messages: Array<Record<string, unknown>> };
    expect(sent.messages.slice(2)).toEqual([
      { role: "assistant", content: null, tool_calls: [{ id: "toolu_01A", type: "function", function: { name: "read_file", arguments: '{"path":"a"}' } }] },
      { role: "tool", tool_call_id: "toolu_01A", content: "A" },
    ]);
  });
});
