import { MIN_TOOL_RESULT_CHARS } from "./context-budget";

/**
 * Shortens a tool result to a character budget before it is stored, streamed
 * or sent to a model (reference §J.91). Keeps at least 2000 characters.
 * When the end of the output looks important (an error, a stack trace, a
 * closing JSON bracket, a summary line) it keeps head and tail; otherwise the
 * head only. Cuts snap to a line break when one is near, so lines stay whole.
 */
export const TAIL_SHARE = 0.3;
export const MAX_TAIL_CHARS = 4000;
/** A cut may move back (head) or forward (tail) by up to this share of the kept part to land on a newline. */
const SNAP_SHARE = 0.2;
/** Where to look for signs that the tail matters. */
const TAIL_PROBE_CHARS = 2000;
const IMPORTANT_TAIL = /\b(error|errors|exception|traceback|failed|failure|fatal|panic|summary|total|result|results)\b/i;

export const OMITTED_MIDDLE_MARKER = "\n\n[… middle of the output omitted: showing its start and its end …]\n\n";
export const truncatedSuffix = (removed: number) => `\n\n[… ${removed} more characters truncated]`;

export interface TruncatedText {
  text: string;
  truncated: boolean;
  /** Characters of the original that are not in `text`. */
  removedChars: number;
}

export function truncateToolResult(text: string, maxChars: number): TruncatedText {
  const budget = Math.max(MIN_TOOL_RESULT_CHARS, maxChars);
  if (text.length <= budget) return { text, truncated: false, removedChars: 0 };
  // The suffix's digits depend on what is removed; sizing it for the whole text is an upper bound.
  const suffixRoom = truncatedSuffix(text.length).length;
  return tailLooksImportant(text) ? headAndTail(text, budget, suffixRoom) : headOnly(text, budget, suffixRoom);
}

export function tailLooksImportant(text: string): boolean {
  const tail = text.slice(-TAIL_PROBE_CHARS);
  return IMPORTANT_TAIL.test(tail) || /[}\]]\s*$/.test(tail);
}

function headOnly(text: string, budget: number, suffixRoom: number): TruncatedText {
  const headEnd = snapBack(text, budget - suffixRoom);
  const removed = text.length - headEnd;
  return { text: text.slice(0, headEnd) + truncatedSuffix(removed), truncated: true, removedChars: removed };
}

function headAndTail(text: string, budget: number, suffixRoom: number): TruncatedText {
  const room = budget - suffixRoom - OMITTED_MIDDLE_MARKER.length;
  const tailChars = Math.min(Math.floor(room * TAIL_SHARE), MAX_TAIL_CHARS);
  const headEnd = snapBack(text, room - tailChars);
  const tailStart = snapForward(text, text.length - tailChars);
  const removed = tailStart - headEnd;
  return {
    text: text.slice(0, headEnd) + OMITTED_MIDDLE_MARKER + text.slice(tailStart) + truncatedSuffix(removed),
    truncated: true,
    removedChars: removed,
  };
}

/** The head ends at `end`, or at a newline within the last 20 % before it. */
function snapBack(text: string, end: number): number {
  const floor = Math.floor(end * (1 - SNAP_SHARE));
  const newline = text.lastIndexOf("\n", end - 1);
  return newline >= floor && newline > 0 ? newline : end;
}

/** The tail starts at `start`, or just after a newline within the first 20 % of the tail. */
function snapForward(text: string, start: number): number {
  const ceiling = start + Math.floor((text.length - start) * SNAP_SHARE);
  const newline = text.indexOf("\n", start);
  return newline !== -1 && newline < ceiling ? newline + 1 : start;
}
