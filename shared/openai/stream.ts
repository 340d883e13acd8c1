/**
 * Run events -> OpenAI server-sent events. Pure and stateful per request:
 * feed each run event (in `seq` order) to `onEvent`, write what it returns;
 * `finish` with the run's outcome writes the closing events and `[DONE]`.
 *
 * Chat Completions: a role chunk, one content chunk per (coalesced)
 * assistant delta, a last chunk with `finish_reason` (`stop`, or
 * `tool_calls` with the client tool calls), a usage chunk when
 * `stream_options.include_usage`, then `data: [DONE]`. A failed run ends
 * with an `error` data line (the OpenAI SDK raises it) before `[DONE]`.
 *
 * Responses: OpenAI's typed events with `sequence_number`
 * (response.created, .in_progress, output_item.added, content_part.added,
 * output_text.delta…, output_text.done, content_part.done,
 * output_item.done, function_call items, response.completed | .failed).
 */
import type { RunEvent } from "../aws/event-log";
import { chatToolCalls, chatUsage, functionCallItem, messageItem, responseResource, type RunOutcome } from "./objects";

export const SSE_DONE = "data: [DONE]\n\n";

const dataLine = (value: unknown) => `data: ${JSON.stringify(value)}\n\n`;

/** The new text of an `assistant` event (`delta`, else nothing: `text` is cumulative). */
export function assistantDelta(event: RunEvent): string {
  if (event.stream !== "assistant") return "";
  const delta = event.data.delta;
  return typeof delta === "string" ? delta : "";
}

export class ChatStreamEncoder {
  private streamed = "";
  constructor(
    private readonly id: string,
    private readonly model: string,
    private readonly createdMs: number,
    private readonly includeUsage: boolean,
  ) {}

  private chunk(delta: Record<string, unknown>, finishReason: string | null = null, extra: Record<string, unknown> = {}): string {
    return dataLine({
      id: this.id,
      object: "chat.completion.chunk",
      created: Math.floor(this.createdMs / 1000),
      model: this.model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
      ...(this.includeUsage ? { usage: null } : {}),
      ...extra,
    });
  }

  start(): string {
    return this.chunk({ role: "assistant", content: "" });
  }

  onEvent(event: RunEvent): string {
    const delta = assistantDelta(event);
    if (!delta) return "";
    this.streamed += delta;
    return this.chunk({ content: delta });
  }

  finish(outcome: RunOutcome): string {
    if (outcome.status !== "ok") {
      const error = { message: outcome.error ?? `the run ended ${outcome.status}`, type: "server_error", param: null, code: outcome.status };
      return dataLine({ error }) + SSE_DONE;
    }
    let out = "";
    // Nothing streamed (an offline model, a reply shaped at the end): the reply in one piece, as OpenClaw does.
    if (!this.streamed && outcome.text) out += this.chunk({ content: outcome.text });
    const calls = outcome.pendingToolCalls;
    if (calls.length > 0) {
      const toolCalls = chatToolCalls(calls).map((call, index) => ({ index, ...call }));
      out += this.chunk({ tool_calls: toolCalls });
    }
    out += this.chunk({}, calls.length > 0 ? "tool_calls" : "stop");
    if (this.includeUsage) {
      out += dataLine({ id: this.id, object: "chat.completion.chunk", created: Math.floor(this.createdMs / 1000), model: this.model, choices: [], usage: chatUsage(outcome.usage) });
    }
    return out + SSE_DONE;
  }
}

export class ResponsesStreamEncoder {
  private sequence = 0;
  private streamed = "";

  constructor(
    private readonly runId: string,
    private readonly model: string,
    private readonly createdMs: number,
  ) {}

  private event(type: string, fields: Record<string, unknown>): string {
    const payload = { type, sequence_number: this.sequence++, ...fields };
    return `event: ${type}\n${dataLine(payload)}`;
  }

  private resource(outcome: Partial<RunOutcome>, status: "in_progress" | "completed" | "failed" | "incomplete") {
    const full: RunOutcome = { runId: this.runId, status: "running", createdAtMs: this.createdMs, text: "", usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, pendingToolCalls: [], ...outcome };
    return responseResource(full, this.model, status);
  }

  start(): string {
    const created = this.resource({}, "in_progress");
    const item = messageItem(this.runId, "", "in_progress");
    return (
      this.event("response.created", { response: created }) +
      this.event("response.in_progress", { response: created }) +
      this.event("response.output_item.added", { output_index: 0, item: { ...item, content: [] } }) +
      this.event("response.content_part.added", { item_id: item.id, output_index: 0, content_index: 0, part: { type: "output_text", text: "", annotations: [] } })
    );
  }

  onEvent(event: RunEvent): string {
    const delta = assistantDelta(event);
    if (!delta) return "";
    this.streamed += delta;
    return this.event("response.output_text.delta", { item_id: `msg_${this.runId}`, output_index: 0, content_index: 0, delta, logprobs: [] });
  }

  finish(outcome: RunOutcome): string {
    const itemId = `msg_${this.runId}`;
    if (outcome.status !== "ok") {
      return this.event("response.failed", { response: this.resource(outcome, "failed") }) + SSE_DONE;
    }
    let out = "";
    if (!this.streamed && outcome.text) out += this.event("response.output_text.delta", { item_id: itemId, output_index: 0, content_index: 0, delta: outcome.text, logprobs: [] });
    const text = outcome.text || this.streamed;
    const item = messageItem(this.runId, text, "completed");
    out += this.event("response.output_text.done", { item_id: itemId, output_index: 0, content_index: 0, text, logprobs: [] });
    out += this.event("response.content_part.done", { item_id: itemId, output_index: 0, content_index: 0, part: item.content[0] });
    out += this.event("response.output_item.done", { output_index: 0, item });
    outcome.pendingToolCalls.forEach((call, index) => {
      const fc = functionCallItem(call, index);
      out += this.event("response.output_item.added", { output_index: index + 1, item: { ...fc, arguments: "", status: "in_progress" } });
      out += this.event("response.function_call_arguments.done", { item_id: fc.id, output_index: index + 1, arguments: fc.arguments });
      out += this.event("response.output_item.done", { output_index: index + 1, item: fc });
    });
    const final = this.resource({ ...outcome, text }, "completed");
    // The message item always opened the stream, so it stays in the final output.
    final.output = [item, ...outcome.pendingToolCalls.map(functionCallItem)] as typeof final.output;
    return out + this.event("response.completed", { response: final }) + SSE_DONE;
  }
}
