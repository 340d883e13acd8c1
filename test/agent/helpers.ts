import type { AssistantBlock, AssistantMessage, Message, ToolCallBlock, ToolResultMessage, Usage } from "../../shared/core/messages";
import type { ProviderFailure } from "../../shared/core/failures";
import type { AttemptSink } from "../../shared/agent/attempt";
import type { ModelProvider, ModelRequest, ProviderEvent } from "../../shared/providers/types";
import type { ToolDefinition } from "../../shared/agent/tools/types";

/** One scripted model turn: what the fake model answers to the next request. */
export type ScriptedTurn =
  | { text?: string; thinking?: string; calls?: { id?: string; name: string; args?: Record<string, unknown> }[]; usage?: Partial<Usage> }
  | { fail: Partial<ProviderFailure>; usage?: Partial<Usage> }
  | { events: ProviderEvent[] };

export const usage = (input = 10, output = 5): Usage => ({ input, output, cacheRead: 0, cacheWrite: 0 });

export function assistant(content: AssistantBlock[], extra: Partial<AssistantMessage> = {}): AssistantMessage {
  return { role: "assistant", content, provider: "scripted", model: "m", stopReason: "stop", usage: usage(0, 0), ...extra };
}

export const user = (content: string): Message => ({ role: "user", content });
export const text = (value: string): AssistantBlock => ({ type: "text", text: value });
export const call = (id: string, name: string, args: Record<string, unknown> = {}): ToolCallBlock => ({ type: "tool_call", id, name, args });
export const result = (toolCallId: string, content = "ok", toolName = "t", isError = false): ToolResultMessage => ({
  role: "tool_result",
  toolCallId,
  toolName,
  content,
  isError,
});

/**
 * A model as code: each request takes the next scripted turn and streams it
 * through the provider contract (deltas, tool-call events, then `end` or `error`).
 * Requests are recorded for assertions.
 */
export class ScriptedProvider implements ModelProvider {
  readonly id = "scripted";
  readonly offline = true;
  readonly api = "openai-chat" as const;
  readonly requests: ModelRequest[] = [];
  private counter = 0;

  constructor(private readonly turns: ScriptedTurn[]) {}

  stream(request: ModelRequest): AsyncIterable<ProviderEvent> {
    this.requests.push({ ...request, messages: [...request.messages] });
    const turn = this.turns.shift();
    const self = this;
    return (async function* (): AsyncGenerator<ProviderEvent> {
      if (!turn) throw new Error("ScriptedProvider: no turn left");
      if ("events" in turn) {
        yield* turn.events;
        return;
      }
      const used = { ...usage(), ...turn.usage };
      if ("fail" in turn) {
        const failure: ProviderFailure = { kind: "server_error", message: "boom", retryable: true, responseStarted: false, ...turn.fail };
        yield { type: "error", failure, partial: assistant([], { stopReason: "error", usage: used }) };
        return;
      }
      const content: AssistantBlock[] = [];
      if (turn.thinking) {
        yield { type: "thinking-delta", text: turn.thinking };
        content.push({ type: "thinking", text: turn.thinking });
      }
      if (turn.text) {
        for (const piece of turn.text.match(/\S+\s*/g) ?? [turn.text]) yield { type: "text-delta", text: piece };
        content.push({ type: "text", text: turn.text });
      }
      for (const c of turn.calls ?? []) {
        const block = call(c.id ?? `call_${++self.counter}`, c.name, c.args ?? {});
        yield { type: "tool-call", id: block.id, name: block.name, args: block.args };
        content.push(block);
      }
      const stopReason = turn.calls?.length ? "tool_calls" : "stop";
      const message = assistant(content, { stopReason, usage: used });
      yield { type: "end", message, stopReason, usage: used };
    })();
  }
}

/** Records everything an attempt reports. */
export class RecordingSink implements AttemptSink {
  readonly events: { type: string; data: unknown }[] = [];
  assistantDelta(delta: string) {
    this.events.push({ type: "assistant", data: delta });
  }
  thinkingDelta(delta: string) {
    this.events.push({ type: "thinking", data: delta });
  }
  toolStart(c: ToolCallBlock) {
    this.events.push({ type: "tool_start", data: c.name });
  }
  toolUpdate(c: ToolCallBlock, partial: string) {
    this.events.push({ type: "tool_update", data: `${c.name}:${partial}` });
  }
  toolResult(c: ToolCallBlock, r: ToolResultMessage) {
    this.events.push({ type: "tool_result", data: `${c.name}:${r.isError ? "error" : "ok"}` });
  }
  types(): string[] {
    return this.events.map((e) => e.type);
  }
}

/** A tool whose executions are counted; `behaviour` decides each call's fate. */
export function countingTool(
  name: string,
  options: { mutating?: boolean; behaviour?: (args: Record<string, unknown>, signal: AbortSignal) => Promise<string> | string; parameters?: Record<string, unknown> } = {},
): ToolDefinition & { calls: Record<string, unknown>[] } {
  const calls: Record<string, unknown>[] = [];
  return {
    name,
    description: `test tool ${name}`,
    parameters: options.parameters ?? { type: "object", properties: {} },
    mutating: options.mutating ?? false,
    calls,
    async execute(args, context) {
      calls.push(args);
      const content = options.behaviour ? await options.behaviour(args, context.signal) : `${name} done`;
      return { content };
    },
  };
}

export const toolMap = (...tools: ToolDefinition[]) => new Map(tools.map((t) => [t.name, t]));

/** A promise that never settles: stands in for a Lambda killed mid-call. */
export const never = <T>() => new Promise<T>(() => undefined);
