import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getRun } from "../../shared/aws/runs";
import { getSession } from "../../shared/aws/sessions";
import { chat } from "../support/fake-openai-server";
import { startStackWithFakeOpenAI, stopStackWithFakeOpenAI, type FakeOpenAIStack } from "../support/fake-openai-stack";

/**
 * A retried OpenAI API request that carries client tool results (the client
 * lost the first answer and sends the same request again) continues nothing
 * twice and starts no new turn: it gets the same run back, whether that run
 * is running, paused for the model's next client tool call, or ended. With
 * the official `openai` SDK through the template-deployed local stack.
 * Also: parallel client tool calls come back in one `tool_calls` answer, and
 * their results (in any order, over one or more requests) continue the run once.
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

const WEATHER = { name: "get_weather", description: "The weather in a city", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } };
const tools: OpenAI.ChatCompletionTool[] = [{ type: "function", function: WEATHER }];

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

    const first = await client.chat.completions.create({ model: "openclaw:main", tools, messages: [question] }, options());
    expect(first.choices[0]!.message.tool_calls?.[0]?.id).toBe("call_rome");
    const runId = first.id.slice("chatcmpl-".length);

    // The Rome result: the run continues and pauses again for Milan.
    const withRome: OpenAI.ChatCompletionMessageParam[] = [question, toolCallMessage("call_rome", "Rome"), { role: "tool", tool_call_id: "call_rome", content: "sunny" }];
    const second = await client.chat.completions.create({ model: "openclaw:main", tools, messages: withRome }, options("k-rome"));
    expect(second.id).toBe(first.id);
    expect(second.choices[0]!.message.tool_calls?.[0]?.id).toBe("call_milan");
    const modelCallsAfterRome = parts.oai.requests.length;

    // The same request again: the same pause, the run not aborted, the model not asked again.
    const secondAgain = await client.chat.completions.create({ model: "openclaw:main", tools, messages: withRome }, options("k-rome"));
    expect(secondAgain.id).toBe(first.id);
    expect(secondAgain.choices[0]!.finish_reason).toBe("tool_calls");
    expect(secondAgain.choices[0]!.message.tool_calls?.[0]?.id).toBe("call_milan");
    expect(await getRun(parts.stack.deps.db, runId)).toMatchObject({ status: "paused" });
    expect(parts.oai.requests.length).toBe(modelCallsAfterRome);

    // The Milan result ends the run; its retry (with or without the key) gets the same answer.
    const withMilan: OpenAI.ChatCompletionMessageParam[] = [...withRome, toolCallMessage("call_milan", "Milan"), { role: "tool", tool_call_id: "call_milan", content: "foggy" }];
    const third = await client.chat.completions.create({ model: "openclaw:main", tools, messages: withMilan }, options("k-milan"));
    expect(third.id).toBe(first.id);
    expect(third.choices[0]!.message.content).toBe("Rome sunny, Milan foggy.");
    const modelCalls = parts.oai.requests.length;
    for (const key of ["k-milan", undefined]) {
      const again = await client.chat.completions.create({ model: "openclaw:main", tools, messages: withMilan }, options(key));
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
    const first = await client.chat.completions.create({ model: "openclaw:main", tools, user, messages: [question] });
    expect(first.choices[0]!.finish_reason).toBe("tool_calls");
    const messages: OpenAI.ChatCompletionMessageParam[] = [question, toolCallMessage("call_bern", "Bern"), { role: "tool", tool_call_id: "call_bern", content: "cold" }];
    const streamedText = async () => {
      let text = "";
      let id = "";
      for await (const chunk of await client.chat.completions.create({ model: "openclaw:main", tools, user, stream: true, messages })) {
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
    const first = await client.chat.completions.create({ model: "openclaw:main", tools, messages: [question] }, options);
    expect(first.choices[0]!.finish_reason).toBe("tool_calls");
    expect(first.choices[0]!.message.tool_calls?.map((call) => call.id)).toEqual(["call_par_oslo", "call_par_riga"]);
    const modelCalls = parts.oai.requests.length;

    // Riga's result alone: the run still waits for Oslo, which is asked for again.
    const history: OpenAI.ChatCompletionMessageParam[] = [question, first.choices[0]!.message];
    const riga: OpenAI.ChatCompletionMessageParam = { role: "tool", tool_call_id: "call_par_riga", content: "rain" };
    const second = await client.chat.completions.create({ model: "openclaw:main", tools, messages: [...history, riga] }, options);
    expect(second.id).toBe(first.id);
    expect(second.choices[0]!.message.tool_calls?.map((call) => call.id)).toEqual(["call_par_oslo"]);
    expect(parts.oai.requests.length, "the model waits for both results").toBe(modelCalls);

    const oslo: OpenAI.ChatCompletionMessageParam = { role: "tool", tool_call_id: "call_par_oslo", content: "snow" };
    const third = await client.chat.completions.create({ model: "openclaw:main", tools, messages: [...history, riga, oslo] }, options);
    expect(third.id).toBe(first.id);
    expect(third.choices[0]!.message.content).toBe("Oslo snow, Riga rain.");
    expect(parts.oai.requests.length, "one continuation with both results").toBe(modelCalls + 1);
    const last = parts.oai.requests.at(-1)!.body as { messages: { role: string; tool_call_id?: string; content: string }[] };
    expect(last.messages.filter((m) => m.role === "tool").map((m) => [m.tool_call_id, m.content])).toEqual([["call_par_oslo", "snow"], ["call_par_riga", "rain"]]);
  }, 300_000);
});
