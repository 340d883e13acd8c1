import type { AssistantMessage, ToolCallBlock } from "../../core/messages";
import type { ProviderEvent } from "../../providers/types";
import type { StreamContext, StreamTransform } from "./transforms";

/**
 * Small and self-hosted models sometimes answer a tool request with the call
 * written as text (`{"name": "read", "arguments": {...}}`, fenced as ```json,
 * or wrapped in <tool_call> tags) instead of a native tool call. When the
 * WHOLE visible answer is such a call to an offered tool, it is promoted to a
 * real tool call. Text that might be one is held back while it streams (so a
 * client never sees JSON that turns into a tool call); as soon as it cannot
 * be one, everything held back is released unchanged.
 */
export const promoteStandaloneTextToolCalls: StreamTransform = {
  name: "promote_standalone_text_tool_calls",
  async *apply(source, context) {
    if (context.toolNames.size === 0) {
      yield* source;
      return;
    }
    let held: string[] | undefined = [];
    const release = function* (): Generator<ProviderEvent> {
      for (const text of held ?? []) yield { type: "text-delta", text };
      held = undefined;
    };
    for await (const event of source) {
      if (event.type === "text-delta" && held) {
        held.push(event.text);
        if (!couldBeToolCall(held.join(""))) yield* release();
      } else if (event.type === "tool-call") {
        yield* release(); // a native call: the text is just text
        yield event;
      } else if (event.type === "end" && held && held.length > 0) {
        const calls = parseTextToolCalls(held.join(""), context);
        if (calls) {
          held = undefined;
          for (const call of calls) yield { type: "tool-call", id: call.id, name: call.name, args: call.args };
          const message = promoted(event.message, calls);
          yield { ...event, message, stopReason: message.stopReason };
        } else {
          yield* release();
          yield event;
        }
      } else if (event.type === "end" || event.type === "error") {
        yield* release();
        yield event;
      } else yield event;
    }
  },
};

const OPENERS = ["{", "[", "```", "<tool_call>"];

/** True while the text so far is empty or starts like a JSON object/array, a code fence or a <tool_call> tag. */
export function couldBeToolCall(text: string): boolean {
  const start = text.trimStart();
  if (start === "") return true;
  return OPENERS.some((opener) => start.startsWith(opener) || opener.startsWith(start));
}

export function parseTextToolCalls(text: string, context: StreamContext): ToolCallBlock[] | undefined {
  const body = unwrap(text.trim());
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined;
  }
  const items = Array.isArray(parsed) ? parsed : [parsed];
  const calls: ToolCallBlock[] = [];
  for (const item of items) {
    const call = asCall(item, context);
    if (!call) return undefined;
    calls.push(call);
  }
  return calls.length > 0 ? calls : undefined;
}

function unwrap(text: string): string {
  const fenced = /^```(?:json|tool_call)?\s*\n?([\s\S]*?)\n?```$/.exec(text);
  if (fenced) return fenced[1].trim();
  const tagged = /^<tool_call>\s*([\s\S]*?)\s*<\/tool_call>$/.exec(text);
  return tagged ? tagged[1] : text;
}

function asCall(item: unknown, context: StreamContext): ToolCallBlock | undefined {
  if (!item || typeof item !== "object") return undefined;
  const record = item as Record<string, unknown>;
  const fn = (record.function && typeof record.function === "object" ? record.function : record) as Record<string, unknown>;
  const name = typeof fn.name === "string" ? fn.name.trim() : "";
  if (!context.toolNames.has(name)) return undefined;
  const rawArgs = fn.arguments ?? fn.parameters ?? fn.args ?? fn.input ?? {};
  const args = typeof rawArgs === "string" ? safeObject(rawArgs) : rawArgs;
  if (!args || typeof args !== "object" || Array.isArray(args)) return undefined;
  return { type: "tool_call", id: context.newCallId(), name, args: args as Record<string, unknown> };
}

function safeObject(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function promoted(message: AssistantMessage, calls: ToolCallBlock[]): AssistantMessage {
  const content = [...message.content.filter((block) => block.type === "thinking"), ...calls];
  return { ...message, content, stopReason: "tool_calls" };
}
