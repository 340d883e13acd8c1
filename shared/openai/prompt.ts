/**
 * OpenAI messages -> one runner message (+ system text), as OpenClaw's
 * gateway does it: system/developer messages become the run's extra system
 * prompt, the conversation becomes the user message. Pure.
 *
 * Difference from OpenClaw, on purpose: when the session is stable (header
 * or `user`), its transcript already holds the earlier turns, so only the
 * active turn (what follows the last assistant message: the new user text
 * and/or tool results) is sent; a one-off session gets the whole history as
 * context, like OpenClaw.
 */
import type { ChatMessage, ResponsesInputItem } from "./request";

export interface ConversationEntry {
  role: "user" | "assistant" | "tool";
  /** Tool results: the call they answer. */
  callId?: string;
  name?: string;
  text: string;
}

export interface AgentPrompt {
  message: string;
  extraSystemPrompt?: string;
}

type Content = ChatMessage["content"] | ResponsesInputItem["content"];

export function textOf(content: Content | unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part) => (part && typeof part === "object" && typeof (part as { text?: unknown }).text === "string" ? (part as { text: string }).text : ""))
    .filter((text) => text.length > 0)
    .join("\n");
}

export function chatConversation(messages: ChatMessage[]): { system: string[]; entries: ConversationEntry[] } {
  const system: string[] = [];
  const entries: ConversationEntry[] = [];
  const namesById = new Map<string, string>();
  for (const message of messages) {
    const text = textOf(message.content).trim();
    if (message.role === "system" || message.role === "developer") {
      if (text) system.push(text);
    } else if (message.role === "assistant") {
      for (const call of message.tool_calls ?? []) namesById.set(call.id, call.function.name);
      const calls = (message.tool_calls ?? []).map((call) => `[called ${call.function.name}(${call.function.arguments}) as ${call.id}]`);
      const body = [text, ...calls].filter(Boolean).join("\n");
      if (body) entries.push({ role: "assistant", text: body });
    } else if (message.role === "tool") {
      entries.push({ role: "tool", callId: message.tool_call_id, name: namesById.get(message.tool_call_id), text });
    } else if (message.role === "function") {
      entries.push({ role: "tool", name: message.name, text });
    } else if (text) {
      entries.push({ role: "user", text });
    }
  }
  return { system, entries };
}

export function responsesConversation(input: string | ResponsesInputItem[], instructions?: string | null): { system: string[]; entries: ConversationEntry[] } {
  const system = instructions?.trim() ? [instructions.trim()] : [];
  if (typeof input === "string") return { system, entries: [{ role: "user", text: input }] };
  const entries: ConversationEntry[] = [];
  const namesById = new Map<string, string>();
  for (const item of input) {
    const typed = item as Record<string, unknown>;
    if (typed.type === "function_call") {
      namesById.set(String(typed.call_id), String(typed.name));
      entries.push({ role: "assistant", text: `[called ${String(typed.name)}(${String(typed.arguments)}) as ${String(typed.call_id)}]` });
    } else if (typed.type === "function_call_output") {
      const output = typeof typed.output === "string" ? typed.output : textOf(typed.output);
      entries.push({ role: "tool", callId: String(typed.call_id), name: namesById.get(String(typed.call_id)), text: output });
    } else if (typeof typed.role === "string") {
      const text = textOf(typed.content).trim();
      if (!text) continue;
      if (typed.role === "system" || typed.role === "developer") system.push(text);
      else entries.push({ role: typed.role === "assistant" ? "assistant" : "user", text });
    }
  }
  return { system, entries };
}

/** What the run receives. `stableSession`: send only the active turn (see the header comment). */
export function buildAgentPrompt(conversation: { system: string[]; entries: ConversationEntry[] }, stableSession: boolean): AgentPrompt {
  const { system, entries } = conversation;
  const lastAssistant = entries.map((entry) => entry.role).lastIndexOf("assistant");
  const active = entries.slice(lastAssistant + 1);
  const history = stableSession ? [] : entries.slice(0, lastAssistant + 1);
  const activeText = active.map(formatEntry).join("\n\n");
  const message = history.length === 0 ? (active.length === 1 && active[0]!.role === "user" ? active[0]!.text : activeText) : withHistory(history, activeText);
  return { message, ...(system.length > 0 ? { extraSystemPrompt: system.join("\n\n") } : {}) };
}

function formatEntry(entry: ConversationEntry): string {
  if (entry.role === "tool") {
    const label = [entry.name, entry.callId ? `call_id=${entry.callId}` : undefined].filter(Boolean).join(", ");
    return `Tool result (${label || "tool"}):\n${entry.text}`;
  }
  return entry.role === "assistant" ? `Assistant: ${entry.text}` : entry.text;
}

function withHistory(history: ConversationEntry[], current: string): string {
  const lines = history.map((entry) => (entry.role === "user" ? `User: ${entry.text}` : formatEntry(entry)));
  return `[Chat messages since your last reply - for context]\n${lines.join("\n")}\n\n[Current message - respond to this]\n${current}`;
}
