/**
 * Provider-neutral conversation model. Transcripts are stored in this shape and
 * every provider adapter converts to and from it, so a session can fail over
 * between OpenAI and Anthropic mid-conversation.
 */
export interface TextBlock {
  type: "text";
  text: string;
}

export interface ThinkingBlock {
  type: "thinking";
  text: string;
  /** Provider signature (Anthropic) that must be echoed back verbatim. */
  signature?: string;
}

export interface ToolCallBlock {
  type: "tool_call";
  id: string;
  name: string;
  args: Record<string, unknown>;
}

export type AssistantBlock = TextBlock | ThinkingBlock | ToolCallBlock;

/** Normalised stop reasons; the provider's raw value is kept next to it. */
export type StopReason = "stop" | "length" | "tool_calls" | "content_filter" | "refusal" | "error" | "aborted";

export interface Usage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

export const ZERO_USAGE: Usage = Object.freeze({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0 });

export function addUsage(a: Usage, b: Usage): Usage {
  return {
    input: a.input + b.input,
    output: a.output + b.output,
    cacheRead: a.cacheRead + b.cacheRead,
    cacheWrite: a.cacheWrite + b.cacheWrite,
  };
}

export interface UserMessage {
  role: "user";
  content: string;
}

export interface AssistantMessage {
  role: "assistant";
  content: AssistantBlock[];
  provider: string;
  model: string;
  stopReason: StopReason;
  rawStopReason?: string;
  usage: Usage;
}

export interface ToolResultMessage {
  role: "tool_result";
  toolCallId: string;
  toolName: string;
  content: string;
  isError: boolean;
}

export type Message = UserMessage | AssistantMessage | ToolResultMessage;

export function assistantText(message: AssistantMessage): string {
  return message.content
    .filter((block): block is TextBlock => block.type === "text")
    .map((block) => block.text)
    .join("");
}

export function toolCallsOf(message: AssistantMessage): ToolCallBlock[] {
  return message.content.filter((block): block is ToolCallBlock => block.type === "tool_call");
}
