import { createHash } from "node:crypto";
import { setRunSessionId, type RunRecord } from "../aws/runs";
import { resetSession, type SessionRecord } from "../aws/sessions";
import { appendEntries, claimWriter, releaseWriter, type WriterClaim } from "../aws/transcript";
import type { EntryBody } from "../core/transcript-entries";
import { runObservers } from "../hooks/runners";
import type { RunDeps } from "./deps";
import { runHooks } from "./run-hooks";

/**
 * Session boundaries, decided when a run starts (in lane order, so no other
 * run of the key is active):
 * - `/new` or `/reset` [text]: the key gets a new session id; the old
 *   transcript stays stored, ends with a `session_end` note, and the run
 *   writes to the new one (its text, or a greeting prompt when there is none);
 * - a run accepted before such a reset adopts the key's current session;
 * - the first entry of every new transcript is a `session_start` note.
 * Hooks `session_start` / `session_end` observe both.
 */
const RESET_COMMAND = /^\/(?:new|reset)(?=\s|$)\s*([\s\S]*)$/i;

/** Our own wording for what the model gets after a bare `/new`. */
export const NEW_SESSION_PROMPT =
  "The user just started a new session (/new); earlier conversation is not available. Greet them briefly and ask what they would like to do.";

export function parseResetCommand(message: string): { reset: boolean; rest: string } {
  const match = RESET_COMMAND.exec(message.trim());
  return match ? { reset: true, rest: match[1].trim() } : { reset: false, rest: message };
}

/** Deterministic, so a repeated StartRun resets to the same id (and does nothing the second time). */
export function sessionIdAfterReset(runId: string): string {
  return `ses_${createHash("sha256").update(`reset:${runId}`).digest("base64url").slice(0, 16)}`;
}

export interface EnteredSession {
  run: RunRecord;
  /** What to persist as the user's message. */
  userText: string;
}

export async function enterSession(deps: RunDeps, run: RunRecord, current: SessionRecord | undefined): Promise<EnteredSession> {
  const command = parseResetCommand(run.message);
  const currentId = current?.sessionId ?? run.sessionId;
  if (command.reset) {
    const next = sessionIdAfterReset(run.runId);
    if (currentId !== next) {
      await resetSession(deps.db, run.sessionKey, currentId, next);
      await endSession(deps, run, currentId, next);
    }
    return { run: await adopt(deps, run, next), userText: command.rest || NEW_SESSION_PROMPT };
  }
  return { run: await adopt(deps, run, currentId), userText: run.message };
}

/** Leading entries of a transcript's first commit: the `session_start` note (and its hook). */
export async function sessionStartEntries(deps: RunDeps, run: RunRecord, claim: WriterClaim): Promise<EntryBody[]> {
  if (claim.nextSeq !== 0) return [];
  await runObservers(runHooks(deps), "session_start", { runId: run.runId, sessionKey: run.sessionKey, sessionId: run.sessionId });
  const previous = parseResetCommand(run.message).reset ? "reset" : "first_message";
  return [{ kind: "note", note: { type: "session_start", sessionKey: run.sessionKey, reason: previous } }];
}

async function adopt(deps: RunDeps, run: RunRecord, sessionId: string): Promise<RunRecord> {
  if (run.sessionId === sessionId) return run;
  await setRunSessionId(deps.db, run.runId, sessionId);
  return { ...run, sessionId };
}

async function endSession(deps: RunDeps, run: RunRecord, endedId: string, nextId: string): Promise<void> {
  const claim = await claimWriter(deps.db, endedId, run.runId, {
    leaseMs: 60_000,
    acquireTimeoutMs: deps.config.session.writeLockAcquireTimeoutMs,
    allowReentrant: true,
  });
  try {
    if (claim.nextSeq > 0) {
      await appendEntries(deps.db, claim, [{ kind: "note", note: { type: "session_end", sessionKey: run.sessionKey, otherSessionId: nextId, reason: "reset" } }]);
    }
  } finally {
    await releaseWriter(deps.db, claim);
  }
  await runObservers(runHooks(deps), "session_end", { runId: run.runId, sessionKey: run.sessionKey, sessionId: endedId });
}
