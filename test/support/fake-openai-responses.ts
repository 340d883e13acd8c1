/**
 * Builders for OpenAI Responses API streams (`/v1/responses`), in the shape
 * OpenAI sends: `event: <type>` + `data: {... "sequence_number": n}` frames,
 * one output item per reasoning summary / message / function call, ending with
 * `response.completed`, `response.incomplete` or `response.failed`.
 * Re-exported from fake-openai-server.ts; import from there.
 */
import { type ScriptStep, splitInto, wordChunks } from "./scripted-sse-server";

const RESPONSES_PATH = "/v1/responses";
const RESPONSE_ID = "resp_68a1c2f0b7e08190a4d3b5c6e7f8a9b0";

export interface ResponsesFunctionCallScript {
  callId?: string;
  name: string;
  args: string | Record<string, unknown>;
  chunks?: number;
}

export interface ResponsesScript {
  model?: string;
  reasoningSummary?: string | string[];
  text?: string | string[];
  refusal?: string;
  functionCalls?: ResponsesFunctionCallScript[];
  /** Default `completed`. */
  status?: "completed" | "incomplete" | "failed";
  incompleteReason?: "max_output_tokens" | "content_filter";
  /** For `failed`. */
  error?: { code: string; message: string };
  usage?: { input: number; output: number; cached?: number; reasoning?: number } | null;
  /** Omit the terminal event (connection cut before the end). */
  truncate?: boolean;
}

class ResponsesWriter {
  private seq = 0;
  readonly frames: string[] = [];
  readonly output: unknown[] = [];

  emit(type: string, fields: Record<string, unknown>): void {
    const data = { type, sequence_number: this.seq++, ...fields };
    this.frames.push(`event: ${type}\ndata: ${JSON.stringify(data)}\n\n`);
  }
}

function responseObject(script: ResponsesScript, status: string, output: unknown[]): Record<string, unknown> {
  const usage = script.usage === undefined ? { input: 36, output: 87 } : script.usage;
  return {
    id: RESPONSE_ID,
    object: "response",
    created_at: 1755500000,
    status,
    background: false,
    error: status === "failed" ? (script.error ?? { code: "server_error", message: "The server had an error processing your request." }) : null,
    incomplete_details: status === "incomplete" ? { reason: script.incompleteReason ?? "max_output_tokens" } : null,
    instructions: null,
    max_output_tokens: null,
    model: script.model ?? "gpt-4.1-2025-04-14",
    output,
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    store: false,
    temperature: 1.0,
    text: { format: { type: "text" }, verbosity: "medium" },
    tool_choice: "auto",
    tools: [],
    top_p: 1.0,
    truncation: "disabled",
    usage:
      status === "in_progress" || !usage
        ? null
        : {
            input_tokens: usage.input,
            input_tokens_details: { cached_tokens: usage.cached ?? 0 },
            output_tokens: usage.output,
            output_tokens_details: { reasoning_tokens: usage.reasoning ?? 0 },
            total_tokens: usage.input + usage.output,
          },
    user: null,
    metadata: {},
  };
}

function writeReasoning(w: ResponsesWriter, summary: string[]): void {
  const item_id = "rs_68a1c2f1a0c48190b1e2d3f4a5b6c7d8";
  const output_index = w.output.length;
  const text = summary.join("");
  w.emit("response.output_item.added", { output_index, item: { id: item_id, type: "reasoning", summary: [] } });
  w.emit("response.reasoning_summary_part.added", { item_id, output_index, summary_index: 0, part: { type: "summary_text", text: "" } });
  for (const delta of summary) w.emit("response.reasoning_summary_text.delta", { item_id, output_index, summary_index: 0, delta });
  w.emit("response.reasoning_summary_text.done", { item_id, output_index, summary_index: 0, text });
  w.emit("response.reasoning_summary_part.done", { item_id, output_index, summary_index: 0, part: { type: "summary_text", text } });
  const item = { id: item_id, type: "reasoning", summary: [{ type: "summary_text", text }] };
  w.emit("response.output_item.done", { output_index, item });
  w.output.push(item);
}

function writeMessage(w: ResponsesWriter, chunks: string[], refusal: string | undefined): void {
  const item_id = "msg_68a1c2f2c1d08190a9b8c7d6e5f4a3b2";
  const output_index = w.output.length;
  const text = chunks.join("");
  w.emit("response.output_item.added", { output_index, item: { id: item_id, type: "message", status: "in_progress", content: [], role: "assistant" } });
  const part = refusal ? { type: "refusal", refusal: "" } : { type: "output_text", annotations: [], logprobs: [], text: "" };
  w.emit("response.content_part.added", { item_id, output_index, content_index: 0, part });
  if (refusal) {
    w.emit("response.refusal.delta", { item_id, output_index, content_index: 0, delta: refusal });
    w.emit("response.refusal.done", { item_id, output_index, content_index: 0, refusal });
  } else {
    for (const delta of chunks) w.emit("response.output_text.delta", { item_id, output_index, content_index: 0, delta, logprobs: [] });
    w.emit("response.output_text.done", { item_id, output_index, content_index: 0, text, logprobs: [] });
  }
  const donePart = refusal ? { type: "refusal", refusal } : { type: "output_text", annotations: [], logprobs: [], text };
  w.emit("response.content_part.done", { item_id, output_index, content_index: 0, part: donePart });
  const item = { id: item_id, type: "message", status: "completed", content: [donePart], role: "assistant" };
  w.emit("response.output_item.done", { output_index, item });
  w.output.push(item);
}

function writeFunctionCall(w: ResponsesWriter, call: ResponsesFunctionCallScript, n: number): void {
  const item_id = `fc_68a1c2f3d2e${n}8190b7a6c5d4e3f2a1b0`;
  const output_index = w.output.length;
  const call_id = call.callId ?? `call_Kx${n}pQ7vRb2mWn9sT4yLcE1dZ`;
  const args = typeof call.args === "string" ? call.args : JSON.stringify(call.args);
  const base = { id: item_id, type: "function_call", call_id, name: call.name };
  w.emit("response.output_item.added", { output_index, item: { ...base, status: "in_progress", arguments: "" } });
  for (const delta of splitInto(args, call.chunks ?? 3)) w.emit("response.function_call_arguments.delta", { item_id, output_index, delta });
  w.emit("response.function_call_arguments.done", { item_id, output_index, name: call.name, arguments: args });
  const item = { ...base, status: "completed", arguments: args };
  w.emit("response.output_item.done", { output_index, item });
  w.output.push(item);
}

/** The SSE body of one streamed Responses API call. */
export function responsesStreamBody(script: ResponsesScript): string {
  const w = new ResponsesWriter();
  w.emit("response.created", { response: responseObject(script, "in_progress", []) });
  w.emit("response.in_progress", { response: responseObject(script, "in_progress", []) });
  const summary = wordChunks(script.reasoningSummary);
  if (summary.length) writeReasoning(w, summary);
  const text = wordChunks(script.text);
  if (text.length || script.refusal) writeMessage(w, text, script.refusal);
  (script.functionCalls ?? []).forEach((call, n) => writeFunctionCall(w, call, n));
  if (!script.truncate) {
    const status = script.status ?? "completed";
    w.emit(`response.${status}`, { response: responseObject(script, status, w.output) });
  }
  return w.frames.join("");
}

/** The Responses `error` event (`{type: "error", code, message, param}`). */
export function responsesErrorEventFrame(code: string, message: string, sequence = 99): string {
  const data = { type: "error", sequence_number: sequence, code, message, param: null };
  return `event: error\ndata: ${JSON.stringify(data)}\n\n`;
}

/** One-line steps for `/v1/responses`. */
export const responses = {
  stream: (script: ResponsesScript): ScriptStep => ({ kind: "sse", path: RESPONSES_PATH, body: responsesStreamBody(script) }),
  text: (text: string): ScriptStep => responses.stream({ text }),
  functionCall: (name: string, args: Record<string, unknown>, callId?: string): ScriptStep =>
    responses.stream({ functionCalls: [{ name, args, callId }] }),
  errorEvent: (partial: ResponsesScript, code: string, message: string): ScriptStep => ({
    kind: "sse",
    path: RESPONSES_PATH,
    body: responsesStreamBody({ ...partial, truncate: true }) + responsesErrorEventFrame(code, message),
  }),
  error: (status: number, body: unknown, headers?: Record<string, string>): ScriptStep => ({ kind: "http-error", path: RESPONSES_PATH, status, body, headers }),
  stall: (partial?: ResponsesScript): ScriptStep => ({ kind: "stall", path: RESPONSES_PATH, body: partial && responsesStreamBody({ ...partial, truncate: true }) }),
  drop: (partial: ResponsesScript): ScriptStep => ({ kind: "drop", path: RESPONSES_PATH, body: responsesStreamBody({ ...partial, truncate: true }) }),
};
