/**
 * OpenAI Responses API adapter (streaming). Same contract as the Chat adapter;
 * differences worth knowing:
 * - the response ends with an explicit `response.completed` / `.incomplete` /
 *   `.failed` event, so a stream without one was cut off;
 * - failures after the stream started arrive in-band (`response.failed`,
 *   `error`) and are classified here like HTTP errors;
 * - `store: false`: transcripts live in our tables, not at OpenAI, so
 *   reasoning items are not replayed (thinking is dropped on the way back).
 */
import type OpenAI from "openai";
import type {
  Response,
  ResponseCreateParamsStreaming,
  ResponseStreamEvent,
  ResponseUsage,
} from "openai/resources/responses/responses";
import type { StopReason, Usage } from "../core/messages";
import type { ProviderFailure } from "../core/failures";
import { classifyProviderError, classifySignal, truncatedStreamFailure } from "./classify";
import { type ContentEvent, guardedStream, parseToolArguments, type StreamIO, type StreamOutcome, toolCallEvent } from "./stream-guard";
import { toOpenAIResponsesInput } from "./transform-messages";
import { openAIReasoningEffort } from "./thinking";
import type { ModelProvider, ModelRequest } from "./types";
import { lazyOpenAIClient } from "./lazy-sdk";

export interface OpenAIResponsesProviderOptions {
  apiKey: string;
  baseURL?: string;
  requestTimeoutMs?: number;
  /** Provider id; defaults to `openai-responses`. */
  id?: string;
}

export const OPENAI_RESPONSES_PROVIDER_ID = "openai-responses";

export function responsesUsage(usage: ResponseUsage): Usage {
  const cached = usage.input_tokens_details?.cached_tokens ?? 0;
  return { input: Math.max(0, usage.input_tokens - cached), output: usage.output_tokens, cacheRead: cached, cacheWrite: 0 };
}

export function buildResponsesParams(request: ModelRequest): ResponseCreateParamsStreaming {
  const params: ResponseCreateParamsStreaming = {
    model: request.model,
    input: toOpenAIResponsesInput(request.messages),
    stream: true,
    store: false,
  };
  if (request.system) params.instructions = request.system;
  if (request.tools.length > 0) {
    params.tools = request.tools.map((tool) => ({
      type: "function",
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters,
      strict: false, // strict mode rejects ordinary JSON Schemas (optional fields, no additionalProperties)
    }));
  }
  if (request.maxOutputTokens !== undefined) params.max_output_tokens = request.maxOutputTokens;
  const effort = openAIReasoningEffort(request.thinking);
  if (effort) params.reasoning = { effort };
  return params;
}

/** Maps a finished response to our stop reason; raw is the status or the incomplete reason. */
export function responsesStop(response: Response, sawToolCalls: boolean, sawRefusal: boolean): StreamOutcome {
  if (response.status === "incomplete") {
    const reason = response.incomplete_details?.reason;
    const stopReason: StopReason = reason === "content_filter" ? "content_filter" : "length";
    return { type: "end", stopReason, rawStopReason: reason ?? "incomplete" };
  }
  const stopReason: StopReason = sawToolCalls ? "tool_calls" : sawRefusal ? "refusal" : "stop";
  return { type: "end", stopReason, rawStopReason: response.status ?? "completed" };
}

function inBandFailure(code: string | null | undefined, message: string, started: boolean): ProviderFailure {
  return classifySignal({ code: code ?? undefined, type: code ?? undefined, message }, started);
}

/** Tracks function_call items; arguments stream by item id, the call id comes with the item. */
class FunctionCalls {
  private readonly byItem = new Map<string, { callId: string; name: string; args: string }>();
  emitted = 0;

  added(itemId: string | undefined, callId: string, name: string, args: string): void {
    this.byItem.set(itemId ?? callId, { callId, name, args });
  }

  delta(itemId: string, text: string): void {
    const call = this.byItem.get(itemId);
    if (call) call.args += text;
  }

  done(itemId: string | undefined, callId: string, name: string, args: string | undefined): ContentEvent {
    const known = this.byItem.get(itemId ?? callId);
    this.emitted++;
    // The done item carries the full arguments; the accumulated deltas are the fallback.
    const raw = args ?? known?.args ?? "";
    return toolCallEvent({ id: callId || known?.callId || "", name: name || known?.name || "", args: parseToolArguments(raw) });
  }
}

async function* runResponses(client: OpenAI, request: ModelRequest, io: StreamIO): AsyncGenerator<ContentEvent, StreamOutcome> {
  const params = buildResponsesParams(request);
  const events = io.watch(() => client.responses.create(params, { signal: io.signal }));
  const calls = new FunctionCalls();
  let sawRefusal = false;
  for await (const event of events as AsyncIterable<ResponseStreamEvent>) {
    switch (event.type) {
      case "response.output_text.delta":
        yield { type: "text-delta", text: event.delta };
        break;
      case "response.refusal.delta":
        sawRefusal = true;
        yield { type: "text-delta", text: event.delta };
        break;
      case "response.reasoning_summary_text.delta":
      case "response.reasoning_text.delta":
        yield { type: "thinking-delta", text: event.delta };
        break;
      case "response.reasoning_summary_part.added":
      case "response.output_item.added":
        io.message.breakBlock(); // each summary part / item is its own block
        if (event.type === "response.output_item.added" && event.item.type === "function_call") {
          calls.added(event.item.id, event.item.call_id, event.item.name, event.item.arguments ?? "");
        }
        break;
      case "response.function_call_arguments.delta":
        calls.delta(event.item_id, event.delta);
        break;
      case "response.output_item.done":
        if (event.item.type === "function_call") {
          yield calls.done(event.item.id, event.item.call_id, event.item.name, event.item.arguments);
        }
        break;
      case "response.completed":
      case "response.incomplete":
        if (event.response.usage) io.message.usage = responsesUsage(event.response.usage);
        return responsesStop(event.response, calls.emitted > 0, sawRefusal);
      case "response.failed": {
        if (event.response.usage) io.message.usage = responsesUsage(event.response.usage);
        const error = event.response.error;
        const failure = inBandFailure(error?.code, error?.message ?? "Response failed without details.", io.message.started);
        return { type: "error", failure };
      }
      case "error":
        return { type: "error", failure: inBandFailure(event.code, event.message, io.message.started) };
    }
  }
  return { type: "error", failure: truncatedStreamFailure(io.message.started, "no response.completed received") };
}

export function createOpenAIResponsesProvider(opts: OpenAIResponsesProviderOptions): ModelProvider {
  const client = lazyOpenAIClient({
    apiKey: opts.apiKey,
    baseURL: opts.baseURL,
    timeout: opts.requestTimeoutMs,
    maxRetries: 0, // the runner owns retries
  });
  const id = opts.id ?? OPENAI_RESPONSES_PROVIDER_ID;
  return {
    id,
    offline: false,
    api: "openai-responses",
    stream: (request) =>
      guardedStream({
        provider: id,
        model: request.model,
        request,
        classify: classifyProviderError,
        run: async function* (io) {
          return yield* runResponses(await client(), request, io);
        },
      }),
  };
}
