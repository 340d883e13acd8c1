/**
 * Pure conversion of our provider-neutral transcript into each provider's
 * request shape. This is what makes mid-session failover possible: a history
 * written by one provider must be acceptable to another.
 *
 * Rules applied for every target:
 * - Tool call ids are rewritten to what the target accepts, through one map
 *   per conversion so a tool_call and its result always get the same id.
 * - Tool calls and results are paired by the one repair the history chain
 *   uses too (core/tool-pairing.ts): a call without a recorded result (run
 *   interrupted) gets a synthetic error result right after its assistant
 *   turn; a result found later is moved up to its call; orphans and
 *   duplicates are dropped (every provider rejects them).
 * - Thinking is replayed only to the provider that produced it and only with
 *   its signature (Anthropic verifies it); everywhere else it is dropped.
 */
import type { ChatCompletionMessageParam } from "openai/resources/chat/completions";
import type { ResponseInputItem } from "openai/resources/responses/responses";
import type { ContentBlockParam, MessageParam } from "@anthropic-ai/sdk/resources/messages";
import type { AssistantMessage, Message, ToolResultMessage } from "../core/messages";
import { repairToolUseResultPairing } from "../core/tool-pairing";

export interface ToolIdRule {
  maxLength: number;
}

/** Anthropic: `^[a-zA-Z0-9_-]{1,64}$`. */
export const ANTHROPIC_TOOL_ID: ToolIdRule = { maxLength: 64 };
/** OpenAI Chat Completions rejects tool_call ids longer than 40 characters. */
export const OPENAI_CHAT_TOOL_ID: ToolIdRule = { maxLength: 40 };
/** Responses `call_id`: kept to the strictest common shape as well. */
export const OPENAI_RESPONSES_TOOL_ID: ToolIdRule = { maxLength: 64 };

export { MISSING_TOOL_RESULT } from "../core/tool-pairing";
/** Anthropic requires the first message to be from the user. */
export const LEADING_USER_PLACEHOLDER = "(conversation continues)";

const INVALID_ID_CHARS = /[^a-zA-Z0-9_-]/g;

/** FNV-1a, base36: a short deterministic fingerprint with no crypto dependency. */
function fingerprint(value: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < value.length; i++) {
    hash ^= value.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0).toString(36).padStart(7, "0");
}

/**
 * Rewrites one id to `[a-zA-Z0-9_-]{1,maxLength}`. Valid ids pass unchanged;
 * changed ids get a fingerprint of the original so distinct ids stay distinct.
 */
export function normalizeToolCallId(id: string, rule: ToolIdRule): string {
  const cleaned = id.replace(INVALID_ID_CHARS, "_");
  if (cleaned === id && id.length > 0 && id.length <= rule.maxLength) return id;
  const suffix = `_${fingerprint(id)}`;
  const head = cleaned.slice(0, rule.maxLength - suffix.length) || "call";
  return `${head}${suffix}`.slice(0, rule.maxLength);
}

/** One mapping per conversion: same original id, same result; distinct ids never collide. */
export function createToolIdMapper(rule: ToolIdRule): (id: string) => string {
  const byOriginal = new Map<string, string>();
  const taken = new Set<string>();
  return (id) => {
    const known = byOriginal.get(id);
    if (known !== undefined) return known;
    let candidate = normalizeToolCallId(id, rule);
    for (let n = 2; taken.has(candidate); n++) {
      candidate = normalizeToolCallId(`${id}#${n}`, rule);
    }
    byOriginal.set(id, candidate);
    taken.add(candidate);
    return candidate;
  };
}

/**
 * Makes every tool call answered exactly once, directly after its assistant
 * turn: the same repair the history chain runs (core/tool-pairing.ts),
 * keeping errored turns' calls (the history chain already decided about those).
 */
export function repairToolPairing(messages: Message[]): Message[] {
  return repairToolUseResultPairing(messages, { erroredAssistantResultPolicy: "keep" }).messages;
}

function textOf(message: AssistantMessage): string {
  return message.content.map((block) => (block.type === "text" ? block.text : "")).join("");
}

/** OpenAI Chat Completions `messages`, system prompt first. */
export function toOpenAIChatMessages(system: string, messages: Message[]): ChatCompletionMessageParam[] {
  const mapId = createToolIdMapper(OPENAI_CHAT_TOOL_ID);
  const out: ChatCompletionMessageParam[] = system ? [{ role: "system", content: system }] : [];
  for (const message of repairToolPairing(messages)) {
    if (message.role === "user") {
      out.push({ role: "user", content: message.content });
    } else if (message.role === "tool_result") {
      out.push({ role: "tool", tool_call_id: mapId(message.toolCallId), content: message.content });
    } else {
      const text = textOf(message);
      const toolCalls = message.content.flatMap((block) =>
        block.type === "tool_call"
          ? [{ id: mapId(block.id), type: "function" as const, function: { name: block.name, arguments: JSON.stringify(block.args) } }]
          : [],
      );
      if (!text && toolCalls.length === 0) continue; // thinking-only or empty (failed) turn
      out.push(toolCalls.length > 0 ? { role: "assistant", content: text || null, tool_calls: toolCalls } : { role: "assistant", content: text });
    }
  }
  return out;
}

/** OpenAI Responses `input` items; the system prompt goes to `instructions`. */
export function toOpenAIResponsesInput(messages: Message[]): ResponseInputItem[] {
  const mapId = createToolIdMapper(OPENAI_RESPONSES_TOOL_ID);
  const out: ResponseInputItem[] = [];
  for (const message of repairToolPairing(messages)) {
    if (message.role === "user") {
      out.push({ role: "user", content: message.content });
    } else if (message.role === "tool_result") {
      out.push({ type: "function_call_output", call_id: mapId(message.toolCallId), output: message.content });
    } else {
      const text = textOf(message);
      if (text) out.push({ role: "assistant", content: text });
      for (const block of message.content) {
        if (block.type !== "tool_call") continue;
        out.push({ type: "function_call", call_id: mapId(block.id), name: block.name, arguments: JSON.stringify(block.args) });
      }
    }
  }
  return out;
}

function anthropicAssistantBlocks(
  message: AssistantMessage,
  targetProvider: string,
  mapId: (id: string) => string,
): ContentBlockParam[] {
  const keepThinking = message.provider === targetProvider;
  return message.content.flatMap((block): ContentBlockParam[] => {
    if (block.type === "thinking") {
      return keepThinking && block.signature ? [{ type: "thinking", thinking: block.text, signature: block.signature }] : [];
    }
    // Anthropic rejects empty or whitespace-only text blocks.
    if (block.type === "text") return block.text.trim() ? [{ type: "text", text: block.text }] : [];
    return [{ type: "tool_use", id: mapId(block.id), name: block.name, input: block.args }];
  });
}

function anthropicBlocksOf(message: Message, targetProvider: string, mapId: (id: string) => string): ContentBlockParam[] {
  if (message.role === "user") return message.content.trim() ? [{ type: "text", text: message.content }] : [];
  if (message.role === "assistant") return anthropicAssistantBlocks(message, targetProvider, mapId);
  const result: ContentBlockParam = { type: "tool_result", tool_use_id: mapId(message.toolCallId), is_error: message.isError };
  if (message.content) result.content = message.content;
  return [result];
}

/**
 * Anthropic `messages` + `system`. Tool results become `tool_result` blocks in
 * a user turn, consecutive same-role turns are merged (the API requires
 * alternation), tool results lead their user turn, and the first turn is a user turn.
 */
export function toAnthropicRequest(
  system: string,
  messages: Message[],
  targetProvider = "anthropic",
): { system?: string; messages: MessageParam[] } {
  const mapId = createToolIdMapper(ANTHROPIC_TOOL_ID);
  const turns: Array<{ role: "user" | "assistant"; content: ContentBlockParam[] }> = [];
  for (const message of repairToolPairing(messages)) {
    const blocks = anthropicBlocksOf(message, targetProvider, mapId);
    if (blocks.length === 0) continue;
    const role = message.role === "assistant" ? "assistant" : "user";
    const last = turns[turns.length - 1];
    if (last?.role === role) last.content.push(...blocks);
    else turns.push({ role, content: blocks });
  }
  for (const turn of turns) {
    if (turn.role === "user") turn.content = toolResultsFirst(turn.content);
  }
  if (turns[0]?.role === "assistant") turns.unshift({ role: "user", content: [{ type: "text", text: LEADING_USER_PLACEHOLDER }] });
  return system ? { system, messages: turns } : { messages: turns };
}

function toolResultsFirst(blocks: ContentBlockParam[]): ContentBlockParam[] {
  return [...blocks.filter((b) => b.type === "tool_result"), ...blocks.filter((b) => b.type !== "tool_result")];
}
