/**
 * OpenAI Chat Completions adapter (streaming). Also the adapter for every
 * OpenAI-compatible server (Ollama, vLLM, DeepSeek, OpenRouter): point
 * `baseURL` at it. Quirks of those servers handled here:
 * - reasoning arrives as `delta.reasoning_content` (vLLM, DeepSeek) or
 *   `delta.reasoning` (Ollama, OpenRouter) and becomes thinking;
 * - some report `finish_reason: "stop"` after tool calls, so calls win;
 * - some omit tool call ids or reuse index 0 for every parallel call.
 * Usage: `input` counts uncached prompt tokens only (prompt_tokens minus
 * cached_tokens), matching Anthropic's meaning so totals add up across providers.
 */
import type OpenAI from "openai";
import type {
  ChatCompletionChunk,
  ChatCompletionCreateParamsStreaming,
} from "openai/resources/chat/completions";
import type { CompletionUsage } from "openai/resources/completions";
import type { StopReason, Usage } from "../core/messages";
import { newId } from "../core/ids";
import { classifyProviderError, truncatedStreamFailure } from "./classify";
import { type ContentEvent, guardedStream, parseToolArguments, type StreamIO, type StreamOutcome, toolCallEvent } from "./stream-guard";
import { openAIReasoningEffort } from "./thinking";
import { toOpenAIChatMessages } from "./transform-messages";
import type { ModelProvider, ModelRequest } from "./types";
import { lazyOpenAIClient } from "./lazy-sdk";

export interface OpenAIChatProviderOptions {
  apiKey: string;
  baseURL?: string;
  /** Connect + headers timeout for one request (the SDK's `timeout`). */
  requestTimeoutMs?: number;
  /**
   * OpenAI's reasoning models only accept `max_completion_tokens`; many
   * compatible servers only know `max_tokens`. Default: the former for
   * api.openai.com (no baseURL), the latter when a baseURL is given.
   */
  maxTokensField?: "max_tokens" | "max_completion_tokens";
  /** Provider id; defaults to `openai`. Lets one register e.g. `ollama` with this adapter. */
  id?: string;
}

type ToolCallDelta = ChatCompletionChunk.Choice.Delta.ToolCall;

/** Parallel tool calls arrive interleaved by `index`; assemble them before emitting. */
class ToolCallAccumulator {
  private readonly slots: Array<{ index: number; id: string; name: string; args: string }> = [];
  private drained = false;

  add(delta: ToolCallDelta, position: number): void {
    const index = typeof delta.index === "number" ? delta.index : position;
    let slot = this.slots.findLast((s) => s.index === index);
    // Some compatible servers send every call with index 0: a new id means a new call.
    if (!slot || (delta.id && slot.id && delta.id !== slot.id)) {
      slot = { index, id: "", name: "", args: "" };
      this.slots.push(slot);
    }
    if (delta.id && !slot.id) slot.id = delta.id;
    if (delta.function?.name && !slot.name) slot.name = delta.function.name;
    if (delta.function?.arguments) slot.args += delta.function.arguments;
  }

  get size(): number {
    return this.slots.length;
  }

  /** Emits each call once, when the response says the calls are complete. */
  drain(): ContentEvent[] {
    if (this.drained) return [];
    this.drained = true;
    return this.slots.map((s) =>
      toolCallEvent({ id: s.id || newId("call"), name: s.name, args: parseToolArguments(s.args) }),
    );
  }
}

export function mapChatFinishReason(raw: string, sawToolCalls: boolean, sawRefusal: boolean): StopReason {
  if (sawToolCalls && (raw === "stop" || raw === "tool_calls" || raw === "function_call")) return "tool_calls";
  switch (raw) {
    case "stop":
      return sawRefusal ? "refusal" : "stop";
    case "length":
      return "length";
    case "tool_calls":
    case "function_call":
      return "tool_calls";
    case "content_filter":
      return "content_filter";
    default:
      return "stop";
  }
}

export function chatUsage(usage: CompletionUsage): Usage {
  // DeepSeek reports cache hits in its own field instead of prompt_tokens_details.
  const deepseekHits = (usage as { prompt_cache_hit_tokens?: unknown }).prompt_cache_hit_tokens;
  const cached = usage.prompt_tokens_details?.cached_tokens ?? (typeof deepseekHits === "number" ? deepseekHits : 0);
  return {
    input: Math.max(0, (usage.prompt_tokens ?? 0) - cached),
    output: usage.completion_tokens ?? 0,
    cacheRead: cached,
    cacheWrite: 0,
  };
}

function reasoningOf(delta: ChatCompletionChunk.Choice.Delta): string | undefined {
  const extra = delta as { reasoning_content?: unknown; reasoning?: unknown };
  if (typeof extra.reasoning_content === "string" && extra.reasoning_content) return extra.reasoning_content;
  if (typeof extra.reasoning === "string" && extra.reasoning) return extra.reasoning;
  return undefined;
}

export function buildChatParams(
  request: ModelRequest,
  maxTokensField: "max_tokens" | "max_completion_tokens",
): ChatCompletionCreateParamsStreaming {
  const params: ChatCompletionCreateParamsStreaming = {
    model: request.model,
    messages: toOpenAIChatMessages(request.system, request.messages),
    stream: true,
    // Without this, streamed responses carry no usage at all.
    stream_options: { include_usage: true },
  };
  if (request.tools.length > 0) {
    params.tools = request.tools.map((tool) => ({
      type: "function",
      function: { name: tool.name, description: tool.description, parameters: tool.parameters },
    }));
  }
  if (request.maxOutputTokens !== undefined) params[maxTokensField] = request.maxOutputTokens;
  const effort = openAIReasoningEffort(request.thinking);
  if (effort) params.reasoning_effort = effort;
  return params;
}

async function* runChat(
  client: OpenAI,
  request: ModelRequest,
  maxTokensField: "max_tokens" | "max_completion_tokens",
  io: StreamIO,
): AsyncGenerator<ContentEvent, StreamOutcome> {
  const params = buildChatParams(request, maxTokensField);
  const chunks = io.watch(() => client.chat.completions.create(params, { signal: io.signal }));
  const calls = new ToolCallAccumulator();
  let finish: string | undefined;
  let sawRefusal = false;
  for await (const chunk of chunks) {
    if (chunk.usage) io.message.usage = chatUsage(chunk.usage);
    const choice = chunk.choices?.[0];
    if (!choice) continue; // the trailing usage-only chunk has `choices: []`
    const delta = choice.delta ?? {};
    const reasoning = reasoningOf(delta);
    if (reasoning) yield { type: "thinking-delta", text: reasoning };
    if (delta.content) yield { type: "text-delta", text: delta.content };
    if (delta.refusal) {
      sawRefusal = true;
      yield { type: "text-delta", text: delta.refusal };
    }
    (delta.tool_calls ?? []).forEach((call, position) => calls.add(call, position));
    if (choice.finish_reason) {
      finish = choice.finish_reason;
      yield* calls.drain();
    }
  }
  // Every server we target sends a finish_reason; its absence means the body was cut.
  if (finish === undefined) {
    return { type: "error", failure: truncatedStreamFailure(io.message.started, "no finish_reason received") };
  }
  return { type: "end", stopReason: mapChatFinishReason(finish, calls.size > 0, sawRefusal), rawStopReason: finish };
}

export function createOpenAIChatProvider(opts: OpenAIChatProviderOptions): ModelProvider {
  const client = lazyOpenAIClient({
    apiKey: opts.apiKey,
    baseURL: opts.baseURL,
    timeout: opts.requestTimeoutMs,
    maxRetries: 0, // the runner owns retries; the SDK would hide 429s and double the wait
  });
  const maxTokensField = opts.maxTokensField ?? (opts.baseURL ? "max_tokens" : "max_completion_tokens");
  const id = opts.id ?? "openai";
  return {
    id,
    offline: false,
    api: "openai-chat",
    stream: (request) =>
      guardedStream({
        provider: id,
        model: request.model,
        request,
        classify: classifyProviderError,
        run: async function* (io) {
          return yield* runChat(await client(), request, maxTokensField, io);
        },
      }),
  };
}
