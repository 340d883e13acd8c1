import { isMessagingDuplicate } from "./messaging-dedupe";

/**
 * Reply shaping: what the caller (and a channel) finally receives.
 * - inline tool summaries first, when the conversation is verbose;
 * - assistant text of the terminal answer, unless it repeats what the
 *   messaging tool already sent (core/messaging-dedupe.ts);
 * - the exact silent token NO_REPLY (alone, any case, surrounding spaces) is dropped,
 *   text that merely ends with it is kept;
 * - on model failure, the user-facing error text;
 * - if nothing renderable is left and a tool failed, one tool-error fallback,
 *   unless the messaging tool already sent something visible.
 */
export interface ReplyPayload {
  text: string;
  isError?: boolean;
  /** The verbose tool summary (one line per tool call). */
  toolSummary?: boolean;
}

/** A tool call as the verbose summary shows it. */
export interface ToolSummaryInput {
  name: string;
  isError: boolean;
}

export interface ReplyInput {
  status: "ok" | "error" | "timeout" | "aborted";
  finalText: string;
  error?: string;
  toolErrors: { toolName: string; message: string }[];
  /** Texts the messaging tool (`message`) already delivered during the run. */
  messagingTexts?: readonly string[];
  /** Verbose conversation: the run's tool calls, summarized inline; error details in the fallback. */
  verbose?: { tools: readonly ToolSummaryInput[] };
}

const SILENT = /^\s*NO_REPLY\s*$/i;

export function isSilentReply(text: string): boolean {
  return SILENT.test(text);
}

export function shapeReply(input: ReplyInput): ReplyPayload[] {
  const payloads: ReplyPayload[] = [];
  const sent = (input.messagingTexts ?? []).filter((text) => text.trim() !== "" && !isSilentReply(text));
  const answer = input.finalText;
  if (answer.trim() !== "" && !isSilentReply(answer) && !isMessagingDuplicate(answer, sent)) payloads.push({ text: answer });
  if (input.status !== "ok" && input.error) payloads.push({ text: input.error, isError: true });
  if (payloads.length === 0 && input.toolErrors.length > 0 && !isSilentReply(answer) && sent.length === 0) {
    const last = input.toolErrors[input.toolErrors.length - 1];
    const detail = input.verbose ? `: ${firstLine(last.message)}` : "";
    payloads.push({ text: `⚠️ ${last.toolName} failed${detail}`, isError: true });
  }
  const summary = input.verbose ? toolSummary(input.verbose.tools) : "";
  return summary ? [{ text: summary, toolSummary: true }, ...payloads] : payloads;
}

/** OpenClaw's inline tool summaries, one line per call: `🛠️ <tool>` (`⚠️ <tool> failed`). */
export function toolSummary(tools: readonly ToolSummaryInput[]): string {
  return tools.map((tool) => (tool.isError ? `⚠️ ${tool.name} failed` : `🛠️ ${tool.name}`)).join("\n");
}

function firstLine(message: string): string {
  const line = message.replace(/^Error:\s*/, "").split("\n")[0].trim();
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}
