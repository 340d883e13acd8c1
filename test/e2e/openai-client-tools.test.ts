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
 * continues that run, whose answer it returns. A retried request whose
 * results were already stored gets that same run back (no new turn); parallel
 * client tool calls come back in one `tool_calls` answer and their results,
 * in any order, continue the run once.
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

const toolCallMessage = (id: string, city: string): OpenAI.ChatCompletionMessageParam => ({
  role: "assistant",
  content: null,
  tool_calls: [{ id, type: "function", function: { name: "get_weather", arguments: JSON.stringify({ city }) } }],
});

describe("OpenAI API: a retried request with tool results", () => {
  it("gets the same run back, paused again or ended, and never starts a new turn", async () => {
    parts.oai.enqueue(
      chat.toolCall("get_weather", { city: "Rome" }, "call_rome"),
      chat.toolCall("get_weather", { city: "Milan" }, "call_milan"),
      chat.text("Rome sunny, Milan foggy."),
    );
    const sessionKey = "oai-tool-retries";
    const options = (idempotencyKey?: string) => ({ headers: { "x-openclaw-session-key": sessionKey, ...(idempotencyKey ? { "idempotency-key": idempotencyKey } : {}) } });
    const question: OpenAI.ChatCompletionMessageParam = { role: "user", content: "Weather in Rome, then Milan?" };

    const first = await client.chat.completions.create({ model: "openclaw:main", tools: chatTools, messages: [question] }, options());
    expect(first.choices[0]!.message.tool_calls?.[0]?.id).toBe("call_rome");
    const runId = first.id.slice("chatcmpl-".length);

    // The Rome result: the run continues and pauses again for Milan.
    const withRome: OpenAI.ChatCompletionMessageParam[] = [question, toolCallMessage("call_rome", "Rome"), { role: "tool", tool_call_id: "call_rome", content: "sunny" }];
    const second = await client.chat.completions.create({ model: "openclaw:main", tools: chatTools, messages: withRome }, options("k-rome"));
    expect(second.id).toBe(first.id);
    expect(second.choices[0]!.message.tool_calls?.[0]?.id).toBe("call_milan");
    const modelCallsAfterRome = parts.oai.requests.length;

    // The same request again: the same pause, the run not aborted, the model not asked again.
    const secondAgain = await client.chat.completions.create({ model: "openclaw:main", tools: chatTools, messages: withRome }, options("k-rome"));
    expect(secondAgain.id).toBe(first.id);
    expect(secondAgain.choices[0]!.finish_reason).toBe("tool_calls");
    expect(secondAgain.choices[0]!.message.tool_calls?.[0]?.id).toBe("call_milan");
    expect(await getRun(parts.stack.deps.db, runId)).toMatchObject({ status: "paused" });
    expect(parts.oai.requests.length).toBe(modelCallsAfterRome);

    // The Milan result ends the run; its retry (with or without the key) gets the same answer.
    const withMilan: OpenAI.ChatCompletionMessageParam[] = [...withRome, toolCallMessage("call_milan", "Milan"), { role: "tool", tool_call_id: "call_milan", content: "foggy" }];
    const third = await client.chat.completions.create({ model: "openclaw:main", tools: chatTools, messages: withMilan }, options("k-milan"));
    expect(third.id).toBe(first.id);
    expect(third.choices[0]!.message.content).toBe("Rome sunny, Milan foggy.");
    const modelCalls = parts.oai.requests.length;
    for (const key of ["k-milan", undefined]) {
      const again = await client.chat.completions.create({ model: "openclaw:main", tools: chatTools, messages: withMilan }, options(key));
      expect(again.id).toBe(first.id);
      expect(again.choices[0]!.finish_reason).toBe("stop");
      expect(again.choices[0]!.message.content).toBe("Rome sunny, Milan foggy.");
    }
    expect(parts.oai.requests.length, "no new turn asked the model").toBe(modelCalls);
    expect(await getRun(parts.stack.deps.db, runId)).toMatchObject({ status: "ok" });
    expect((await getSession(parts.stack.deps.db, sessionKey))?.lastRunId, "no other run on the session").toBe(runId);
  }, 300_000);

  it("a streamed retry replays the continuation from the pause, not from its end", async () => {
    parts.oai.enqueue(chat.toolCall("get_weather", { city: "Bern" }, "call_bern"), chat.text("Cold in Bern."));
    const user = "oai-tool-retries-stream";
    const question: OpenAI.ChatCompletionMessageParam = { role: "user", content: "Weather in Bern?" };
    const first = await client.chat.completions.create({ model: "openclaw:main", tools: chatTools, user, messages: [question] });
    expect(first.choices[0]!.finish_reason).toBe("tool_calls");
    const messages: OpenAI.ChatCompletionMessageParam[] = [question, toolCallMessage("call_bern", "Bern"), { role: "tool", tool_call_id: "call_bern", content: "cold" }];
    const streamedText = async () => {
      let text = "";
      let id = "";
      for await (const chunk of await client.chat.completions.create({ model: "openclaw:main", tools: chatTools, user, stream: true, messages })) {
        id = chunk.id;
        text += chunk.choices[0]?.delta.content ?? "";
      }
      return { id, text };
    };
    expect(await streamedText()).toEqual({ id: first.id, text: "Cold in Bern." });
    expect(await streamedText()).toEqual({ id: first.id, text: "Cold in Bern." });
  }, 300_000);
});

describe("OpenAI API: parallel client tool calls", () => {
  it("come back together in one tool_calls answer; results in any order, over two requests, continue the run once", async () => {
    parts.oai.enqueue(
      chat.toolCalls([
        { name: "get_weather", args: { city: "Oslo" }, id: "call_par_oslo" },
        { name: "get_weather", args: { city: "Riga" }, id: "call_par_riga" },
      ]),
      chat.text("Oslo snow, Riga rain."),
    );
    const options = { headers: { "x-openclaw-session-key": "oai-parallel-tools" } };
    const question: OpenAI.ChatCompletionMessageParam = { role: "user", content: "Weather in Oslo and Riga?" };
    const first = await client.chat.completions.create({ model: "openclaw:main", tools: chatTools, messages: [question] }, options);
    expect(first.choices[0]!.finish_reason).toBe("tool_calls");
    expect(first.choices[0]!.message.tool_calls?.map((call) => call.id)).toEqual(["call_par_oslo", "call_par_riga"]);
    const modelCalls = parts.oai.requests.length;

    // Riga's result alone: the run still waits for Oslo, which is asked for again.
    const history: OpenAI.ChatCompletionMessageParam[] = [question, first.choices[0]!.message];
    const riga: OpenAI.ChatCompletionMessageParam = { role: "tool", tool_call_id: "call_par_riga", content: "rain" };
    const second = await client.chat.completions.create({ model: "openclaw:main", tools: chatTools, messages: [...history, riga] }, options);
    expect(second.id).toBe(first.id);
    expect(second.choices[0]!.message.tool_calls?.map((call) => call.id)).toEqual(["call_par_oslo"]);
    expect(parts.oai.requests.length, "the model waits for both results").toBe(modelCalls);

    const oslo: OpenAI.ChatCompletionMessageParam = { role: "tool", tool_call_id: "call_par_oslo", content: "snow" };
    const third = await client.chat.completions.create({ model: "openclaw:main", tools: chatTools, messages: [...history, riga, oslo] }, options);
    expect(third.id).toBe(first.id);
    expect(third.choices[0]!.message.content).toBe("Oslo snow, Riga rain.");
    expect(parts.oai.requests.length, "one continuation with both results").toBe(modelCalls + 1);
    const last = parts.oai.requests.at(-1)!.body as { messages: { role: string; tool_call_id?: string; content: string }[] };
    expect(last.messages.filter((m) => m.role === "tool").map((m) => [m.tool_call_id, m.content])).toEqual([["call_par_oslo", "snow"], ["call_par_riga", "rain"]]);
  }, 300_000);
});
