import type { AssistantMessage, Message, UserMessage } from "../../core/messages";
import type { ProviderApi } from "../../providers/types";

export type { ProviderApi };

/**
 * Step 2 of the history chain: the provider's turn rules (OpenClaw's
 * validateAnthropicTurns / validateGeminiTurns).
 * - No provider accepts a tool result before any assistant turn: leading results go.
 * - Anthropic wants strict user/assistant alternation: consecutive user
 *   messages are merged, and consecutive assistant messages without tool
 *   calls are merged. (Tool-call pairing is the pairing step's job.)
 * - `strict` (after a provider rejected the turn order, e.g. a vLLM chat
 *   template's "roles must alternate"): the same alternation for every
 *   provider, and the history starts with a user turn.
 */
export function validateProviderTurns(messages: readonly Message[], api: ProviderApi, options: { strict?: boolean } = {}): Message[] {
  const start = messages.findIndex((message) => (options.strict ? message.role === "user" : message.role !== "tool_result"));
  const rest = start === -1 ? [] : messages.slice(start);
  if (api !== "anthropic-messages" && !options.strict) return [...rest];
  const out: Message[] = [];
  for (const message of rest) {
    const last = out[out.length - 1];
    if (last?.role === "user" && message.role === "user") out[out.length - 1] = mergeUsers(last, message);
    else if (last?.role === "assistant" && message.role === "assistant" && !hasToolCalls(last) && !hasToolCalls(message)) {
      out[out.length - 1] = mergeAssistants(last, message);
    } else out.push(message);
  }
  return out;
}

function hasToolCalls(message: AssistantMessage): boolean {
  return message.content.some((block) => block.type === "tool_call");
}

function mergeUsers(a: UserMessage, b: UserMessage): UserMessage {
  return { role: "user", content: `${a.content}\n\n${b.content}` };
}

function mergeAssistants(a: AssistantMessage, b: AssistantMessage): AssistantMessage {
  return { ...b, content: [...a.content, ...b.content] };
}
