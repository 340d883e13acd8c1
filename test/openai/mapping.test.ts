import { describe, expect, it } from "vitest";
import type { RunEvent } from "../../shared/aws/event-log";
import { chatCompletion, responseResource, runIdOfChatId, runIdOfResponseId, type RunOutcome } from "../../shared/openai/objects";
import { buildAgentPrompt, chatConversation, responsesConversation } from "../../shared/openai/prompt";
import { agentIdFor, modelOverrideFor, sessionFor } from "../../shared/openai/routing";
import { ChatStreamEncoder, ResponsesStreamEncoder, SSE_DONE } from "../../shared/openai/stream";
import { selectRoute, type LocalRestRoute } from "../../infra/local/api-gateway/rest-routes";

const usage = { input: 10, output: 4, cacheRead: 2, cacheWrite: 0 };
const ok: RunOutcome = { runId: "run_a", status: "ok", createdAtMs: 1_800_000_000_000, text: "Hi there.", usage, pendingToolCalls: [] };
const event = (seq: number, stream: RunEvent["stream"], data: Record<string, unknown>): RunEvent => ({ v: 1, runId: "run_a", sessionKey: "s", seq, stream, ts: seq, data });
const dataLines = (sse: string) => sse.split("\n\n").filter((f) => f.includes("data: ")).map((f) => f.slice(f.indexOf("data: ") + 6));

describe("agent and session selection (OpenClaw's rules)", () => {
  it("header, then openclaw:/agent: model, then main", () => {
    expect(agentIdFor("gpt-4o", "Beta")).toBe("beta");
    expect(agentIdFor("openclaw:main", undefined)).toBe("main");
    expect(agentIdFor("openclaw/research", undefined)).toBe("research");
    expect(agentIdFor("agent:ops", undefined)).toBe("ops");
    expect(agentIdFor("gpt-4o", undefined)).toBe("main");
  });

  it("a provider/model runs that model; an agent name runs the agent's", () => {
    expect(modelOverrideFor("openai/gpt-4o")).toBe("openai/gpt-4o");
    expect(modelOverrideFor("openclaw:main")).toBeUndefined();
    expect(modelOverrideFor("gpt-4o")).toBeUndefined();
  });

  it("session header verbatim, else stable from user, else new per request", () => {
    expect(sessionFor({ agentId: "main", prefix: "openai", headerValue: " my-key ", user: "u", freshId: "x" })).toEqual({ sessionKey: "my-key", stable: true });
    expect(sessionFor({ agentId: "main", prefix: "openai", user: "ada", freshId: "x" })).toEqual({ sessionKey: "agent:main:openai-user:ada", stable: true });
    expect(sessionFor({ agentId: "main", prefix: "openresponses", freshId: "f1" })).toEqual({ sessionKey: "agent:main:openresponses:f1", stable: false });
    // A user that cannot be part of a key is replaced by its digest, still stable.
    const odd = sessionFor({ agentId: "main", prefix: "openai", user: "Ada Lovelace <ada@x>", freshId: "x" });
    expect(odd.sessionKey).toMatch(/^agent:main:openai-user:sha256-[0-9a-f]{32}$/);
    expect(sessionFor({ agentId: "main", prefix: "openai", user: "Ada Lovelace <ada@x>", freshId: "y" })).toEqual(odd);
  });
});

describe("messages -> the run's message", () => {
  const messages = [
    { role: "system" as const, content: "Be brief." },
    { role: "user" as const, content: "What is 2+2?" },
    { role: "assistant" as const, content: null, tool_calls: [{ id: "call_1", type: "function" as const, function: { name: "calc", arguments: '{"e":"2+2"}' } }] },
    { role: "tool" as const, tool_call_id: "call_1", content: "4" },
  ];

  it("system text becomes the extra system prompt; a stable session gets only the active turn", () => {
    const prompt = buildAgentPrompt(chatConversation(messages), true);
    expect(prompt.extraSystemPrompt).toBe("Be brief.");
    expect(prompt.message).toBe("Tool result (calc, call_id=call_1):\n4");
  });

  it("a one-off session gets the history as context", () => {
    const prompt = buildAgentPrompt(chatConversation(messages), false);
    expect(prompt.message).toContain("User: What is 2+2?");
    expect(prompt.message).toContain("[called calc");
    expect(prompt.message).toContain("[Current message - respond to this]\nTool result (calc, call_id=call_1):\n4");
  });

  it("a single user message is sent as it is; content parts are joined", () => {
    expect(buildAgentPrompt(chatConversation([{ role: "user", content: [{ type: "text", text: "a" }, { type: "text", text: "b" }] }]), false).message).toBe("a\nb");
  });

  it("Responses input: instructions, messages and function_call_output items", () => {
    const conversation = responsesConversation(
      [{ role: "user", content: "weather?" }, { type: "function_call", call_id: "c9", name: "weather", arguments: "{}" }, { type: "function_call_output", call_id: "c9", output: "sunny" }],
      "Use tools.",
    );
    const prompt = buildAgentPrompt(conversation, true);
    expect(prompt).toEqual({ message: "Tool result (weather, call_id=c9):\nsunny", extraSystemPrompt: "Use tools." });
  });
});

describe("OpenAI objects from a run", () => {
  it("chat.completion with the run's usage; tool calls when the run ended on client tools", () => {
    const completion = chatCompletion(ok, "openclaw:main");
    expect(completion).toMatchObject({ id: "chatcmpl-run_a", choices: [{ message: { content: "Hi there." }, finish_reason: "stop" }], usage: { prompt_tokens: 12, completion_tokens: 4, total_tokens: 16, prompt_tokens_details: { cached_tokens: 2 } } });
    const called = chatCompletion({ ...ok, text: "", pendingToolCalls: [{ id: "call_1", name: "lookup", arguments: "{}" }] }, "m");
    expect(called.choices[0]).toMatchObject({ finish_reason: "tool_calls", message: { content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "lookup" } }] } });
    expect(runIdOfChatId(completion.id)).toBe("run_a");
  });

  it("response resources: completed, failed, in progress; function_call items", () => {
    expect(responseResource(ok, "m")).toMatchObject({ id: "resp_run_a", status: "completed", output_text: "Hi there.", output: [{ type: "message" }] });
    expect(responseResource({ ...ok, status: "error", error: "boom" }, "m")).toMatchObject({ status: "failed", error: { message: "boom" }, output: [] });
    expect(responseResource({ ...ok, status: "running" }, "m")).toMatchObject({ status: "in_progress", output: [] });
    expect(responseResource({ ...ok, text: "", pendingToolCalls: [{ id: "c", name: "f", arguments: "{}" }] }, "m").output).toEqual([expect.objectContaining({ type: "function_call", call_id: "c", name: "f" })]);
    expect(runIdOfResponseId("resp_run_a")).toBe("run_a");
    expect(runIdOfResponseId("chatcmpl-run_a")).toBeUndefined();
  });
});

describe("SSE encoders", () => {
  it("chat: role chunk, one chunk per assistant delta, finish, usage, [DONE]", () => {
    const encoder = new ChatStreamEncoder("chatcmpl-run_a", "m", ok.createdAtMs, true);
    let sse = encoder.start();
    sse += encoder.onEvent(event(1, "lifecycle", { phase: "start" }));
    sse += encoder.onEvent(event(2, "assistant", { text: "Hi", delta: "Hi" }));
    sse += encoder.onEvent(event(3, "assistant", { text: "Hi there.", delta: " there." }));
    sse += encoder.finish(ok);
    expect(sse.endsWith(SSE_DONE)).toBe(true);
    const chunks = dataLines(sse).filter((line) => line !== "[DONE]").map((line) => JSON.parse(line));
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? null).filter((c) => c !== null).join("")).toBe("Hi there.");
    expect(chunks[chunks.length - 2].choices[0].finish_reason).toBe("stop");
    expect(chunks[chunks.length - 1]).toMatchObject({ choices: [], usage: { total_tokens: 16 } });
  });

  it("chat: nothing streamed sends the reply whole; a failed run ends with an error line", () => {
    const quiet = new ChatStreamEncoder("id", "m", 0, false);
    expect(dataLines(quiet.finish(ok)).some((line) => line.includes('"content":"Hi there."'))).toBe(true);
    const failed = new ChatStreamEncoder("id", "m", 0, false).finish({ ...ok, status: "error", error: "LLM request failed." });
    expect(JSON.parse(dataLines(failed)[0]!)).toMatchObject({ error: { message: "LLM request failed.", code: "error" } });
    expect(failed.endsWith(SSE_DONE)).toBe(true);
  });

  it("responses: typed events with increasing sequence numbers through response.completed", () => {
    const encoder = new ResponsesStreamEncoder("run_a", "m", 0);
    const sse = encoder.start() + encoder.onEvent(event(2, "assistant", { delta: "Hi there." })) + encoder.finish(ok);
    const events = dataLines(sse).filter((line) => line !== "[DONE]").map((line) => JSON.parse(line));
    expect(events.map((e) => e.type)).toEqual([
      "response.created", "response.in_progress", "response.output_item.added", "response.content_part.added",
      "response.output_text.delta", "response.output_text.done", "response.content_part.done", "response.output_item.done", "response.completed",
    ]);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events[events.length - 1].response).toMatchObject({ status: "completed", output_text: "Hi there." });
  });
});

describe("local REST resource selection (API Gateway's most specific match)", () => {
  const routes: LocalRestRoute[] = [
    { httpMethod: "ANY", resourcePath: "/" },
    { httpMethod: "ANY", resourcePath: "/{proxy+}" },
    { httpMethod: "ANY", resourcePath: "/v1/{proxy+}" },
    { httpMethod: "POST", resourcePath: "/v1/chat/completions" },
    { httpMethod: "GET", resourcePath: "/v1/chat/completions/{id}" },
  ];

  it("literal beats parameter beats greedy; the method is checked on the chosen resource", () => {
    expect(selectRoute(routes, "POST", "/v1/chat/completions")?.route.resourcePath).toBe("/v1/chat/completions");
    expect(selectRoute(routes, "GET", "/v1/chat/completions/chatcmpl-x")).toMatchObject({ route: { resourcePath: "/v1/chat/completions/{id}" }, pathParameters: { id: "chatcmpl-x" } });
    expect(selectRoute(routes, "POST", "/v1/agent")).toMatchObject({ route: { resourcePath: "/v1/{proxy+}" }, pathParameters: { proxy: "agent" } });
    expect(selectRoute(routes, "GET", "/health")).toMatchObject({ route: { resourcePath: "/{proxy+}" }, pathParameters: { proxy: "health" } });
    expect(selectRoute(routes, "GET", "/")).toMatchObject({ route: { resourcePath: "/" }, pathParameters: null });
    // GET on a POST-only resource: API Gateway's 403, not the greedy fallback.
    expect(selectRoute(routes, "GET", "/v1/chat/completions")).toBeUndefined();
  });
});
