import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getRun, TERMINAL_STATUSES } from "../../shared/aws/runs";
import { getSession } from "../../shared/aws/sessions";
import { readTranscript } from "../../shared/aws/transcript";
import { chat } from "../support/fake-openai-server";
import { startStackWithFakeOpenAI, stopStackWithFakeOpenAI, type FakeOpenAIStack } from "../support/fake-openai-stack";
import { until } from "../support/until";

/**
 * The OpenAI-compatible API's client tools (issue 14; docs/openai-api.md
 * "Client tools"), with the official `openai` SDK through the
 * template-deployed local stack: the model's call of a request's function
 * tool comes back as `tool_calls` / a `function_call` item while the run
 * waits paused; the next request on the same session with the result
 * continues that run, whose answer it returns.
 */
let parts: FakeOpenAIStack;
let client: OpenAI;

beforeAll(async () => {
  parts = await startStackWithFakeOpenAI();
  client = new OpenAI({ apiKey: parts.stack.authToken, baseURL: `${parts.stack.restUrl}/v1`, maxRetries: 0, timeout: 120_000 });
}, 180_000);

afterAll(async () => {
  await stopStackWithFakeOpenAI(parts ?? {});
});

const WEATHER = { name: "get_weather", description: "The weather in a city, from the caller's own service", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } };
const chatTools: OpenAI.ChatCompletionTool[] = [{ type: "function", function: WEATHER }];
const responsesTools: OpenAI.Responses.Tool[] = [{ type: "function", ...WEATHER, strict: false }];

/** What the model was sent as the result of `toolCallId` (a real tool result, not text in a user message). */
function toolResultSeen(toolCallId: string): string | undefined {
  for (const request of parts.oai.requests) {
    const messages = (request.body as { messages?: { role: string; tool_call_id?: string; content: string }[] }).messages ?? [];
    const found = messages.find((m) => m.role === "tool" && m.tool_call_id === toolCallId);
    if (found) return found.content;
  }
  return undefined;
}

function offeredTools(): string[] {
  const body = parts.oai.lastRequest?.body as { tools?: { function: { name: string } }[] };
  return (body.tools ?? []).map((t) => t.function.name);
}

describe("OpenAI API client tools with the openai SDK", () => {
  it("chat.completions: the call comes back as tool_calls; the next request's tool message continues the same run", async () => {
    parts.oai.enqueue(chat.toolCall("get_weather", { city: "Paris" }, "call_paris"), chat.text("Sunny in Paris, 21 degrees."));
    const session = { headers: { "x-openclaw-session-key": "oai-tools-chat" } };
    const question: OpenAI.ChatCompletionMessageParam = { role: "user", content: "Weather in Paris?" };
    const first = await client.chat.completions.create({ model: "openclaw:main", tools: chatTools, messages: [question] }, session);
    expect(offeredTools()).toContain("get_weather");
    expect(first.choices[0]!.finish_reason).toBe("tool_calls");
    const call = first.choices[0]!.message.tool_calls![0]!;
    expect(call).toMatchObject({ id: "call_paris", type: "function", function: { name: "get_weather" } });
    expect(JSON.parse((call as { function: { arguments: string } }).function.arguments)).toEqual({ city: "Paris" });
    const runId = first.id.slice("chatcmpl-".length);
    expect(await getRun(parts.stack.deps.db, runId)).toMatchObject({ status: "paused" });

    const second = await client.chat.completions.create(
      { model: "openclaw:main", tools: chatTools, messages: [question, first.choices[0]!.message, { role: "tool", tool_call_id: "call_paris", content: "sunny, 21 C" }] },
      session,
    );
    expect(second.choices[0]!.finish_reason).toBe("stop");
    expect(second.choices[0]!.message.content).toBe("Sunny in Paris, 21 degrees.");
    expect(second.id).toBe(first.id);
    expect(toolResultSeen("call_paris")).toBe("sunny, 21 C");
    expect(await getRun(parts.stack.deps.db, runId)).toMatchObject({ status: "ok" });
    // The transcript holds the call and its real result, in order.
    const sessionRecord = await getSession(parts.stack.deps.db, "oai-tools-chat");
    const roles = (await readTranscript(parts.stack.deps.db, sessionRecord!.sessionId)).map((e) => e.message.role);
    expect(roles.slice(-3)).toEqual(["assistant", "tool_result", "assistant"]);
  }, 240_000);

  it("chat.completions with stream: true: tool_call chunks and finish_reason tool_calls, then the continuation streamed (session from `user`)", async () => {
    parts.oai.enqueue(chat.toolCall("get_weather", { city: "Oslo" }, "call_oslo"), chat.text("Snow in Oslo."));
    const question: OpenAI.ChatCompletionMessageParam = { role: "user", content: "Weather in Oslo?" };
    const first = await client.chat.completions.create({ model: "openclaw:main", tools: chatTools, stream: true, user: "oai-tools-stream", messages: [question] });
    const calls: { id?: string; name?: string; arguments: string }[] = [];
    let finish: string | null = null;
    for await (const chunk of first) {
      for (const delta of chunk.choices[0]?.delta.tool_calls ?? []) {
        calls[delta.index] ??= { arguments: "" };
        const entry = calls[delta.index]!;
        if (delta.id) entry.id = delta.id;
        if (delta.function?.name) entry.name = delta.function.name;
        entry.arguments += delta.function?.arguments ?? "";
      }
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(finish).toBe("tool_calls");
    expect(calls).toEqual([{ id: "call_oslo", name: "get_weather", arguments: JSON.stringify({ city: "Oslo" }) }]);

    const second = await client.chat.completions.create({
      model: "openclaw:main",
      tools: chatTools,
      stream: true,
      user: "oai-tools-stream",
      messages: [question, { role: "assistant", content: null, tool_calls: [{ id: "call_oslo", type: "function", function: { name: "get_weather", arguments: calls[0]!.arguments } }] }, { role: "tool", tool_call_id: "call_oslo", content: "snow, -3 C" }],
    });
    let text = "";
    finish = null;
    for await (const chunk of second) {
      text += chunk.choices[0]?.delta.content ?? "";
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(text).toBe("Snow in Oslo.");
    expect(finish).toBe("stop");
    expect(toolResultSeen("call_oslo")).toBe("snow, -3 C");
  }, 240_000);

  it("responses: a function_call item; function_call_output with previous_response_id continues the run", async () => {
    parts.oai.enqueue(chat.toolCall("get_weather", { city: "Rome" }, "call_rome"), chat.text("Cloudy in Rome."));
    const first = await client.responses.create({ model: "openclaw:main", tools: responsesTools, input: "Weather in Rome?" });
    const item = first.output.find((o) => o.type === "function_call") as OpenAI.Responses.ResponseFunctionToolCall | undefined;
    expect(item).toMatchObject({ type: "function_call", call_id: "call_rome", name: "get_weather" });
    expect(JSON.parse(item!.arguments)).toEqual({ city: "Rome" });

    const second = await client.responses.create({
      model: "openclaw:main",
      tools: responsesTools,
      previous_response_id: first.id,
      input: [{ type: "function_call_output", call_id: "call_rome", output: "cloudy, 17 C" }],
    });
    expect(second.status).toBe("completed");
    expect(second.output_text).toBe("Cloudy in Rome.");
    expect(toolResultSeen("call_rome")).toBe("cloudy, 17 C");
  }, 240_000);

  it("responses with stream: true: the function_call item in the stream, then the continuation streamed", async () => {
    parts.oai.enqueue(chat.toolCall("get_weather", { city: "Lima" }, "call_lima"), chat.text("Mild in Lima."));
    const session = { headers: { "x-openclaw-session-key": "oai-tools-responses-stream" } };
    const first = await client.responses.create({ model: "openclaw:main", tools: responsesTools, input: "Weather in Lima?", stream: true }, session);
    let completed: OpenAI.Responses.Response | undefined;
    const added: string[] = [];
    for await (const event of first) {
      if (event.type === "response.output_item.added") added.push(event.item.type);
      if (event.type === "response.completed") completed = event.response;
    }
    expect(added).toContain("function_call");
    expect(completed?.output.find((o) => o.type === "function_call")).toMatchObject({ call_id: "call_lima", name: "get_weather" });

    const second = await client.responses.create(
      { model: "openclaw:main", tools: responsesTools, input: [{ type: "function_call_output", call_id: "call_lima", output: "mild, 19 C" }], stream: true },
      session,
    );
    let text = "";
    for await (const event of second) if (event.type === "response.output_text.delta") text += event.delta;
    expect(text).toBe("Mild in Lima.");
    expect(toolResultSeen("call_lima")).toBe("mild, 19 C");
  }, 240_000);

  it("a next request without the results (a new question) ends the paused run aborted at once and is answered by a run of its own", async () => {
    parts.oai.enqueue(chat.toolCall("get_weather", { city: "Kyiv" }, "call_kyiv"), chat.text("Hello again."));
    const session = { headers: { "x-openclaw-session-key": "oai-tools-abandoned" } };
    const first = await client.chat.completions.create({ model: "openclaw:main", tools: chatTools, messages: [{ role: "user", content: "Weather in Kyiv?" }] }, session);
    expect(first.choices[0]!.finish_reason).toBe("tool_calls");
    const second = await client.chat.completions.create({ model: "openclaw:main", tools: chatTools, messages: [{ role: "user", content: "Never mind, just say hello." }] }, session);
    expect(second.choices[0]!.message.content).toBe("Hello again.");
    expect(second.id).not.toBe(first.id);
    expect(await getRun(parts.stack.deps.db, first.id.slice("chatcmpl-".length))).toMatchObject({ status: "aborted" });
  }, 240_000);

  it("a one-off chat session (no session key, no user): the tool_calls answer ends the run, which nobody could resume", async () => {
    parts.oai.enqueue(chat.toolCall("get_weather", { city: "Cairo" }, "call_cairo"));
    const first = await client.chat.completions.create({ model: "openclaw:main", tools: chatTools, messages: [{ role: "user", content: "Weather in Cairo?" }] });
    expect(first.choices[0]!.finish_reason).toBe("tool_calls");
    const runId = first.id.slice("chatcmpl-".length);
    expect(await until(async () => {
      const run = await getRun(parts.stack.deps.db, runId);
      return run && TERMINAL_STATUSES.has(run.status) ? run : undefined;
    }, "the one-off run to end", 120_000)).toMatchObject({ status: "aborted" });
  }, 240_000);
});
