/**
 * Anthropic Messages API adapter (streaming).
 * - Blocks arrive with explicit boundaries (`content_block_start`/`stop`);
 *   tool_use input streams as partial JSON and is parsed at the block's stop.
 * - Thinking signatures arrive as `signature_delta` after the thinking text and
 *   are kept so the block can be replayed to Anthropic verbatim.
 * - Extended thinking is requested only when the run asks for a level
 *   (./thinking: budget by level, max_tokens raised above the budget).
 * - `redacted_thinking` blocks are not kept: our transcript has no place for
 *   their opaque payload (a known gap when thinking is on: Anthropic wants
 *   them replayed within one tool loop; it sends them rarely).
 * - An `error` SSE event (e.g. overloaded_error mid-response) is thrown by the
 *   SDK without an HTTP status and classified by its `type`.
 * - A stream that closes without `message_stop` was cut off.
 * Usage: `input` is Anthropic's `input_tokens` (already excludes cache reads and writes).
 */
import type Anthropic from "@anthropic-ai/sdk";
import type {
  MessageCreateParamsStreaming,
  MessageDeltaUsage,
  RawMessageStreamEvent,
  Usage as AnthropicUsage,
} from "@anthropic-ai/sdk/resources/messages";
import type { StopReason, Usage } from "../core/messages";
import { classifyProviderError, truncatedStreamFailure } from "./classify";
import { type ContentEvent, guardedStream, parseToolArguments, type StreamIO, type StreamOutcome, toolCallEvent } from "./stream-guard";
import { anthropicThinking } from "./thinking";
import { toAnthropicRequest } from "./transform-messages";
import type { ModelProvider, ModelRequest } from "./types";
import { lazyAnthropicClient } from "./lazy-sdk";

export interface AnthropicProviderOptions {
  apiKey: string;
  baseURL?: string;
  requestTimeoutMs?: number;
}

export const ANTHROPIC_PROVIDER_ID = "anthropic";
/** Anthropic requires max_tokens on every request. */
export const DEFAULT_MAX_TOKENS = 4096;

export function mapAnthropicStopReason(raw: string | null | undefined): StopReason {
  switch (raw) {
    case "max_tokens":
    case "model_context_window_exceeded":
      return "length";
    case "tool_use":
      return "tool_calls";
    case "refusal":
      return "refusal";
    // end_turn, stop_sequence, and pause_turn (a server-tool turn the caller may continue).
    default:
      return "stop";
  }
}

/** message_start carries the input side; message_delta carries cumulative output (and, lately, input) counts. */
export function mergeAnthropicUsage(current: Usage, usage: Partial<AnthropicUsage> | MessageDeltaUsage): Usage {
  return {
    input: usage.input_tokens ?? current.input,
    output: usage.output_tokens ?? current.output,
    cacheRead: usage.cache_read_input_tokens ?? current.cacheRead,
    cacheWrite: usage.cache_creation_input_tokens ?? current.cacheWrite,
  };
}

export function buildAnthropicParams(request: ModelRequest): MessageCreateParamsStreaming {
  const { system, messages } = toAnthropicRequest(request.system, request.messages, ANTHROPIC_PROVIDER_ID);
  const params: MessageCreateParamsStreaming = {
    model: request.model,
    max_tokens: request.maxOutputTokens ?? DEFAULT_MAX_TOKENS,
    messages,
    stream: true,
  };
  if (system) params.system = system;
  const thinking = anthropicThinking(request.thinking, params.max_tokens);
  if (thinking) {
    params.thinking = { type: "enabled", budget_tokens: thinking.budgetTokens };
    params.max_tokens = thinking.maxTokens;
  }
  if (request.tools.length > 0) {
    params.tools = request.tools.map((tool) => ({
      name: tool.name,
      description: tool.description,
      // input_schema must be an object schema; tools declared without a type still are one.
      input_schema: { type: "object", ...tool.parameters } as Anthropic.Tool.InputSchema,
    }));
  }
  return params;
}

type OpenToolUse = { id: string; name: string; json: string };

async function* runAnthropic(client: Anthropic, request: ModelRequest, io: StreamIO): AsyncGenerator<ContentEvent, StreamOutcome> {
  const params = buildAnthropicParams(request);
  const events = io.watch(() => client.messages.create(params, { signal: io.signal }));
  const toolUses = new Map<number, OpenToolUse>();
  let rawStop: string | null | undefined;
  for await (const event of events as AsyncIterable<RawMessageStreamEvent>) {
    switch (event.type) {
      case "message_start":
        io.message.usage = mergeAnthropicUsage(io.message.usage, event.message.usage);
        break;
      case "content_block_start":
        io.message.breakBlock();
        if (event.content_block.type === "tool_use") {
          toolUses.set(event.index, { id: event.content_block.id, name: event.content_block.name, json: "" });
        } else if (event.content_block.type === "text" && event.content_block.text) {
          yield { type: "text-delta", text: event.content_block.text };
        }
        break;
      case "content_block_delta": {
        const delta = event.delta;
        if (delta.type === "text_delta") yield { type: "text-delta", text: delta.text };
        else if (delta.type === "thinking_delta") yield { type: "thinking-delta", text: delta.thinking };
        else if (delta.type === "signature_delta") io.message.signThinking(delta.signature);
        else if (delta.type === "input_json_delta") {
          const open = toolUses.get(event.index);
          if (open) open.json += delta.partial_json;
        }
        break;
      }
      case "content_block_stop": {
        const open = toolUses.get(event.index);
        if (open) {
          toolUses.delete(event.index);
          yield toolCallEvent({ id: open.id, name: open.name, args: parseToolArguments(open.json) });
        }
        break;
      }
      case "message_delta":
        io.message.usage = mergeAnthropicUsage(io.message.usage, event.usage);
        rawStop = event.delta.stop_reason;
        break;
      case "message_stop":
        return { type: "end", stopReason: mapAnthropicStopReason(rawStop), rawStopReason: rawStop ?? undefined };
    }
  }
  return { type: "error", failure: truncatedStreamFailure(io.message.started, "no message_stop received") };
}

export function createAnthropicProvider(opts: AnthropicProviderOptions): ModelProvider {
  const client = lazyAnthropicClient({
    apiKey: opts.apiKey,
    baseURL: opts.baseURL,
    timeout: opts.requestTimeoutMs,
    maxRetries: 0, // the runner owns retries
  });
  return {
    id: ANTHROPIC_PROVIDER_ID,
    offline: false,
    api: "anthropic-messages",
    stream: (request) =>
      guardedStream({
        provider: ANTHROPIC_PROVIDER_ID,
        model: request.model,
        request,
        classify: classifyProviderError,
        run: async function* (io) {
          return yield* runAnthropic(await client(), request, io);
        },
      }),
  };
}
