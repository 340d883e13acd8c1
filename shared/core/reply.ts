/**
 * Reply shaping: what the caller (and a channel) finally receives.
 * - assistant text of the terminal answer;
 * - the exact silent token NO_REPLY (alone, any case, surrounding spaces) is dropped,
 *   text that merely ends with it is kept;
 * - on model failure, the user-facing error text;
 * - if nothing renderable is left and a tool failed, one tool-error fallback.
 */
export interface ReplyPayload {
  text: string;
  isError?: boolean;
}

export interface ReplyInput {
  status: "ok" | "error" | "timeout" | "aborted";
  finalText: string;
  error?: string;
  toolErrors: { toolName: string; message: string }[];
}

const SILENT = /^\s*NO_REPLY\s*$/i;

export function isSilentReply(text: string): boolean {
  return SILENT.test(text);
}

export function shapeReply(input: ReplyInput): ReplyPayload[] {
  const payloads: ReplyPayload[] = [];
  if (input.finalText.trim() !== "" && !isSilentReply(input.finalText)) payloads.push({ text: input.finalText });
  if (input.status !== "ok" && input.error) payloads.push({ text: input.error, isError: true });
  if (payloads.length === 0 && input.toolErrors.length > 0 && !isSilentReply(input.finalText)) {
    const last = input.toolErrors[input.toolErrors.length - 1];
    payloads.push({ text: `⚠️ ${last.toolName} failed`, isError: true });
  }
  return payloads;
}
