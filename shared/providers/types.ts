import type { AssistantMessage, Message, StopReason, Usage } from "../core/messages";
import type { ProviderFailure } from "../core/failures";
import type { ThinkingLevel } from "../core/run-loop";

/** A tool as the model sees it: name, description and a JSON Schema for its arguments. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export interface ModelRequest {
  /** Model id as the provider knows it (no provider prefix). */
  model: string;
  system: string;
  messages: Message[];
  tools: ToolSpec[];
  maxOutputTokens?: number;
  /** Aborts the request; the stream then ends with an `error` of kind `aborted`. */
  signal?: AbortSignal;
  /** No chunk for this long ends the stream with an `error` of kind `timeout`. */
  idleTimeoutMs?: number;
  /** Reasoning effort to ask for; undefined or `off` asks for none (the provider's default). */
  thinking?: ThinkingLevel;
}

/**
 * Stream parts, named noun-verb with start/delta/end. The contract: a stream
 * NEVER throws and ALWAYS ends with exactly one `end` or `error` part. `error`
 * carries whatever partial assistant message had been received.
 */
export type ProviderEvent =
  | { type: "text-delta"; text: string }
  | { type: "thinking-delta"; text: string }
  | { type: "tool-call"; id: string; name: string; args: Record<string, unknown> }
  | { type: "end"; message: AssistantMessage; stopReason: StopReason; usage: Usage }
  | { type: "error"; failure: ProviderFailure; partial: AssistantMessage };

/** Which wire format (and so which turn rules) a provider speaks. */
export type ProviderApi = "openai-chat" | "openai-responses" | "anthropic-messages" | "offline";

export interface ModelProvider {
  /** Provider id as used in `provider/model` references, e.g. `openai`. */
  readonly id: string;
  /** The wire format; the history pipeline applies its turn rules. */
  readonly api: ProviderApi;
  /** True for the built-in deterministic model that needs no network or key. */
  readonly offline: boolean;
  stream(request: ModelRequest): AsyncIterable<ProviderEvent>;
}
