/**
 * The OpenAI API's client tools (issue 14; docs/openai-api.md "Client
 * tools"). A request's function `tools` are the run's client tools; when the
 * model calls one, the run pauses (the same `.waitForTaskToken` pause as
 * every client tool) and the request answers with the call as `tool_calls` /
 * `function_call` items. The caller's next request on the same session
 * (header `x-openclaw-session-key`, `user`, or `previous_response_id`) carries
 * the results (`role: "tool"` messages, `function_call_output` items): they
 * are stored as the results of the waiting calls and the SAME run continues;
 * that request answers with what follows (the paused turn is finished in the
 * transcript with the real results, no text re-encoding of the history).
 * A next request without results for the waiting calls (a new question)
 * aborts the paused run, which wakes and ends at once, and runs as usual.
 */
import { lastEventSeq } from "../aws/event-log";
import { getLane } from "../aws/lanes";
import { getRun, TERMINAL_STATUSES, type RunRecord } from "../aws/runs";
import { pendingInputsOf } from "../aws/external-inputs";
import type { Caller } from "../core/access";
import { ApiError } from "../protocol/errors";
import { abortRun } from "../run/abort";
import { resolveClientToolResult } from "../run/resolve-client-tool";
import type { RunDeps } from "../run/deps";
import { owns } from "../tenancy/guard";
import type { ConversationEntry } from "./prompt";

export interface ResumedRun {
  runId: string;
  acceptedAt: number;
  sessionKey: string;
  /** The continuation's events follow this one. */
  afterSeq: number;
}

/** The tool results of the active turn (what follows the last assistant entry), by call id. */
export function activeToolResults(entries: readonly ConversationEntry[]): Map<string, string> {
  const lastAssistant = entries.map((entry) => entry.role).lastIndexOf("assistant");
  const results = new Map<string, string>();
  for (const entry of entries.slice(lastAssistant + 1)) if (entry.role === "tool" && entry.callId) results.set(entry.callId, entry.text);
  return results;
}

/**
 * The session's run waiting for client tool results, resumed with the ones
 * this request carries; undefined when there is none (the request starts a
 * run of its own, after aborting a paused run it does not answer).
 */
export async function resumeWithToolResults(deps: RunDeps, sessionKey: string, entries: readonly ConversationEntry[], caller?: Caller): Promise<ResumedRun | undefined> {
  const run = await waitingRun(deps, sessionKey, caller);
  if (!run) return undefined;
  const waiting = (await pendingInputsOf(deps.db, run.runId)).filter((input) => input.kind === "client_tool");
  if (waiting.length === 0) return undefined;
  const results = activeToolResults(entries);
  const answered = waiting.filter((input) => results.has(input.toolCallId));
  if (answered.length === 0) {
    await abortRun(deps, run.runId, "a new OpenAI API request on the session did not answer its client tool calls");
    return undefined;
  }
  const afterSeq = await lastEventSeq(deps.db, run.runId);
  for (const input of answered) {
    try {
      await resolveClientToolResult(deps, run, input.toolCallId, results.get(input.toolCallId)!);
    } catch (error) {
      // Answered meanwhile (a retried request): the run continues once either way.
      if (!(error instanceof ApiError && error.code === "APPROVAL_CONFLICT")) throw error;
    }
  }
  return { runId: run.runId, acceptedAt: run.acceptedAt, sessionKey: run.sessionKey, afterSeq };
}

async function waitingRun(deps: RunDeps, sessionKey: string, caller: Caller | undefined): Promise<RunRecord | undefined> {
  const { activeRunId } = await getLane(deps.db, sessionKey);
  const run = activeRunId ? await getRun(deps.db, activeRunId) : undefined;
  if (!run || TERMINAL_STATUSES.has(run.status) || (caller && !owns(caller, run))) return undefined;
  return run.status === "paused" ? run : undefined;
}
