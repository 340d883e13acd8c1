import type { Message } from "./messages";
import { isMessageEntry, type CompactionRecord, type SeqEntry } from "./transcript-entries";

/**
 * What a model sees of a session: the latest compaction's summary, then the
 * messages from its `firstKeptSeq` on, each replaced by its latest rewrite
 * (a truncated tool result). Pure: stored entries in, prompt history out.
 */
export interface ViewMessage {
  message: Message;
  /** Stored position of the message; undefined for the synthetic summary. */
  seq?: number;
}

export interface SessionView {
  messages: ViewMessage[];
  compaction?: { seq: number; record: CompactionRecord };
}

export const SUMMARY_PREFIX = "[Summary of the earlier conversation. It was compacted to fit the context window; the messages after it are verbatim.]";

export function summaryMessage(summary: string): Message {
  return { role: "user", content: `${SUMMARY_PREFIX}\n\n${summary}` };
}

export function isSummaryMessage(message: Message): boolean {
  return message.role === "user" && message.content.startsWith(SUMMARY_PREFIX);
}

export function sessionView(entries: readonly SeqEntry[]): SessionView {
  let compaction: SessionView["compaction"];
  const rewrites = new Map<number, Message>();
  for (const entry of entries) {
    if (entry.kind === "compaction") compaction = { seq: entry.seq, record: entry.compaction };
    else if (entry.kind === "rewrite") rewrites.set(entry.rewrite.targetSeq, entry.rewrite.message);
  }
  const from = compaction?.record.firstKeptSeq ?? 0;
  const messages: ViewMessage[] = compaction ? [{ message: summaryMessage(compaction.record.summary) }] : [];
  for (const entry of entries) {
    if (!isMessageEntry(entry) || entry.seq < from) continue;
    messages.push({ message: rewrites.get(entry.seq) ?? entry.message, seq: entry.seq });
  }
  return { messages, ...(compaction ? { compaction } : {}) };
}

/** The history an attempt sends to the model. */
export function modelHistory(entries: readonly SeqEntry[]): Message[] {
  return sessionView(entries).messages.map((m) => m.message);
}
