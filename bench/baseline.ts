/**
 * The physical floor for the overhead figure: the same conversation driven
 * directly through the `openai` SDK in a plain loop (stream, collect tool
 * calls, run the calculator, send the results back) with nothing persisted
 * and nothing streamed anywhere.
 */
import OpenAI from "openai";
import type { ChatCompletionMessageParam, ChatCompletionTool } from "openai/resources/chat/completions";
import { performance } from "node:perf_hooks";
import { calculatorTool } from "../shared/agent/tools/calculator";
import { messageFor, type Shape } from "./shapes";

const TOOLS: ChatCompletionTool[] = [
  {
    type: "function",
    function: { name: calculatorTool.name, description: calculatorTool.description, parameters: calculatorTool.parameters as Record<string, unknown> },
  },
];

export function createBaselineClient(baseURL: string): OpenAI {
  return new OpenAI({ apiKey: "bench", baseURL, maxRetries: 0 });
}

/** One run; resolves with the client-side wall time in ms. */
export async function baselineRun(client: OpenAI, shape: Shape, runTag: string, systemPrompt: string): Promise<number> {
  const started = performance.now();
  const messages: ChatCompletionMessageParam[] = [
    { role: "system", content: systemPrompt },
    { role: "user", content: messageFor(shape, runTag) },
  ];
  for (let round = 0; round < 32; round += 1) {
    const { text, calls } = await streamOnce(client, messages);
    if (calls.length === 0) return performance.now() - started;
    messages.push({
      role: "assistant",
      content: text || null,
      tool_calls: calls.map((call) => ({ id: call.id, type: "function", function: { name: call.name, arguments: call.args } })),
    });
    for (const call of calls) {
      const context = { runId: runTag, sessionKey: "baseline", signal: new AbortController().signal };
      const result = await calculatorTool.execute(JSON.parse(call.args) as Record<string, unknown>, context);
      messages.push({ role: "tool", tool_call_id: call.id, content: result.content });
    }
  }
  throw new Error("baseline: too many tool rounds");
}

async function streamOnce(client: OpenAI, messages: ChatCompletionMessageParam[]) {
  const stream = await client.chat.completions.create({
    model: "bench",
    messages,
    tools: TOOLS,
    stream: true,
    stream_options: { include_usage: true },
  });
  let text = "";
  const calls: { id: string; name: string; args: string }[] = [];
  for await (const chunk of stream) {
    const delta = chunk.choices?.[0]?.delta;
    if (!delta) continue;
    if (delta.content) text += delta.content;
    for (const part of delta.tool_calls ?? []) {
      const slot = (calls[part.index] ??= { id: "", name: "", args: "" });
      if (part.id) slot.id = part.id;
      if (part.function?.name) slot.name = part.function.name;
      if (part.function?.arguments) slot.args += part.function.arguments;
    }
  }
  return { text, calls };
}
