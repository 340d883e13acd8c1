import { isSilentReply } from "./reply";

const SILENT_TOKEN = "NO_REPLY";

/**
 * What a streamed preview may show of the text so far: nothing while the
 * text could still turn out to be exactly the silent token NO_REPLY (a
 * partial prefix of it is held back), everything once it cannot.
 */
export function streamableText(text: string): string {
  const trimmed = text.trim();
  if (trimmed === "" || isSilentReply(text)) return "";
  if (SILENT_TOKEN.startsWith(trimmed.toUpperCase())) return "";
  return text;
}
