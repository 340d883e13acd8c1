import { ZERO_USAGE, type AssistantMessage, type Message } from "../core/messages";
import type { ProviderFailure } from "../core/failures";
import { newId } from "../core/ids";
import type { ModelProvider, ModelRequest } from "../providers/types";
import { traceModelCall } from "../observability/model-trace";
import { applyStreamTransforms, STREAM_TRANSFORMS, type StreamTransform } from "./stream/transforms";
import type { ToolDefinition } from "./tools/types";

export type TurnResult = { ok: true; message: AssistantMessage } | { ok: false; failure: ProviderFailure; partial: AssistantMessage };

export interface TurnSink {
  assistantDelta(delta: string): void;
  thinkingDelta(delta: string): void;
}

export interface TurnRequest {
  provider: ModelProvider;
  model: string;
  system: string;
  messages: readonly Message[];
  tools: ReadonlyMap<string, ToolDefinition>;
  signal: AbortSignal;
  idleTimeoutMs?: number;
  maxOutputTokens?: number;
  thinking?: ModelRequest["thinking"];
  transforms?: readonly StreamTransform[];
}

/**
 * One model call: the provider's stream through the compatibility
 * transforms, deltas forwarded as they arrive, ending in the complete
 * assistant message or a classified failure (providers never throw).
 */
export function streamModelTurn(request: TurnRequest, sink: TurnSink): Promise<TurnResult> {
  return traceModelCall(
    { provider: request.provider.id, model: request.model },
    (firstToken) => streamUntraced(request, {
      assistantDelta: (delta) => (firstToken(), sink.assistantDelta(delta)),
      thinkingDelta: (delta) => (firstToken(), sink.thinkingDelta(delta)),
    }),
    (result) => (result.ok ? result.message.usage : result.partial.usage),
  );
}

async function streamUntraced(request: TurnRequest, sink: TurnSink): Promise<TurnResult> {
  const tools = [...request.tools.values()].map(({ name, description, parameters }) => ({ name, description, parameters }));
  const source = request.provider.stream({
    model: request.model,
    system: request.system,
    messages: [...request.messages],
    tools,
    maxOutputTokens: request.maxOutputTokens,
    signal: request.signal,
    idleTimeoutMs: request.idleTimeoutMs,
    ...(request.thinking ? { thinking: request.thinking } : {}),
  });
  const context = { toolNames: new Set(request.tools.keys()), newCallId: () => newId("call") };
  for await (const event of applyStreamTransforms(source, context, request.transforms ?? STREAM_TRANSFORMS)) {
    if (event.type === "text-delta") sink.assistantDelta(event.text);
    else if (event.type === "thinking-delta") sink.thinkingDelta(event.text);
    else if (event.type === "end") return { ok: true, message: event.message };
    else if (event.type === "error") return { ok: false, failure: event.failure, partial: event.partial };
  }
  // The provider contract says this cannot happen; treat it as a classified failure, not a crash.
  return {
    ok: false,
    failure: { kind: "unknown", message: "model stream ended without a terminal event", retryable: true, responseStarted: true },
    partial: { role: "assistant", content: [], provider: request.provider.id, model: request.model, stopReason: "error", usage: ZERO_USAGE },
  };
}
