import * as z from "zod";
import { MessageSchema } from "./message-schema";
import type { Message, ToolResultMessage } from "./messages";

/**
 * What a transcript entry holds besides its position. Entries are
 * append-only; nothing is ever deleted or overwritten:
 *   message     a conversation message (user, assistant with its blocks, tool result)
 *   compaction  a summary of everything before `firstKeptSeq` (older entries stay stored)
 *   rewrite     a shortened copy of an earlier tool result (head + tail) that
 *               replaces it in what models see; the original stays stored
 *   note        a system note: session boundaries
 * Entries written before kinds existed have no `kind` and are messages.
 */
export const COMPACTION_ENTRY_TRIGGERS = ["overflow", "timeout", "precheck", "manual"] as const;

export const CompactionRecordSchema = z.lazy(() => z.object({
  summary: z.string(),
  /** The first entry the model still sees verbatim after this compaction. */
  firstKeptSeq: z.number().int().min(0),
  /** Estimated prompt tokens of the history before and after. */
  tokensBefore: z.number().int().min(0),
  tokensAfter: z.number().int().min(0),
  trigger: z.enum(COMPACTION_ENTRY_TRIGGERS),
  /** `provider/model` that wrote the summary (the model that runs next). */
  model: z.string(),
  /** Context window the compaction was sized for. */
  contextTokens: z.number().int().positive(),
  summarizedMessages: z.number().int().min(0),
}));
export type CompactionRecord = z.infer<typeof CompactionRecordSchema>;

export const RewriteRecordSchema = z.lazy(() => z.object({
  targetSeq: z.number().int().min(0),
  reason: z.literal("tool_result_truncation"),
  message: MessageSchema,
  originalChars: z.number().int().min(0),
}));
export type RewriteRecord = z.infer<typeof RewriteRecordSchema>;

export const NoteRecordSchema = z.lazy(() => z.object({
  type: z.enum(["session_start", "session_end"]),
  sessionKey: z.string(),
  /** session_end: the session that replaces this one; session_start: the one it replaced. */
  otherSessionId: z.string().optional(),
  reason: z.string().optional(),
}));
export type NoteRecord = z.infer<typeof NoteRecordSchema>;

// Built on first parse (z.lazy): a function that never reads these pays nothing for them at import (issue 15).
export const EntryBodySchema = z.lazy(() => z.union([
  z.object({ kind: z.literal("message").optional(), message: MessageSchema }),
  z.object({ kind: z.literal("compaction"), compaction: CompactionRecordSchema }),
  z.object({ kind: z.literal("rewrite"), rewrite: RewriteRecordSchema }),
  z.object({ kind: z.literal("note"), note: NoteRecordSchema }),
]));
export type EntryBody =
  | { kind?: "message"; message: Message }
  | { kind: "compaction"; compaction: CompactionRecord }
  | { kind: "rewrite"; rewrite: RewriteRecord }
  | { kind: "note"; note: NoteRecord };

export type SeqEntry = EntryBody & { seq: number };

export function isMessageEntry(entry: EntryBody): entry is { kind?: "message"; message: Message } {
  return entry.kind === undefined || entry.kind === "message";
}

export function rewriteOf(targetSeq: number, truncated: ToolResultMessage, originalChars: number): EntryBody {
  return { kind: "rewrite", rewrite: { targetSeq, reason: "tool_result_truncation", message: truncated, originalChars } };
}
