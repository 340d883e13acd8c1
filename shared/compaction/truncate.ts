import { appendEntries, readEntries, type WriterClaim } from "../aws/transcript";
import type { Db } from "../aws/dynamo";
import { planToolResultTruncation } from "../core/compaction-plan";
import { sessionView } from "../core/session-view";
import { rewriteOf } from "../core/transcript-entries";

/**
 * Shortens oversized tool results in the stored transcript (reference
 * §G.58, §J.89) under the caller's writer claim: each gets a rewrite entry
 * holding its head + tail, appended and committed through the same fenced
 * HEAD update as every other append, so a writer that lost its claim cannot
 * rewrite anything. Readers use the rewrite in place of the original; the
 * original stays stored.
 */
export async function truncateStoredToolResults(db: Db, claim: WriterClaim, maxChars: number): Promise<{ claim: WriterClaim; rewritten: number }> {
  const view = sessionView(await readEntries(db, claim.sessionId));
  const rewrites = planToolResultTruncation(view.messages, maxChars);
  if (rewrites.length === 0) return { claim, rewritten: 0 };
  const next = await appendEntries(db, claim, rewrites.map((r) => rewriteOf(r.targetSeq, r.message, r.originalChars)));
  return { claim: next, rewritten: rewrites.length };
}
