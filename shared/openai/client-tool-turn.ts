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
 * A retried request (its results already stored) gets the same run back.
 */
import { lastEventSeq } from "../aws/event-log";
import { getLane } from "../aws/lanes";
import { getRun, TERMINAL_STATUSES, type RunRecord } from "../aws/runs";
import { getExternalInput, pendingInputsOf } from "../aws/external-inputs";
import { getSession } from "../aws/sessions";
import type { ExternalInput } from "../core/external-input";
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
 * run of its own, after aborting a paused run it does not answer). A retry of
 * a request whose results were already stored (same results, the run since
 * running, paused again or ended) gets that same run back, never a new turn.
 */
export async function resumeWithToolResults(deps: RunDeps, sessionKey: string, entries: readonly ConversationEntry[], caller?: Caller): Promise<ResumedRun | undefined> {
  const results = activeToolResults(entries);
  const run = await waitingRun(deps, sessionKey, caller);
  const waiting = run ? (await pendingInputsOf(deps.db, run.runId)).filter((input) => input.kind === "client_tool") : [];
  const answered = waiting.filter((input) => results.has(input.toolCallId));
  if (run && answered.length > 0) return resume(deps, run, answered, results);
  // Only a request that ends with its results (it asks nothing new) can be a retry.
  const onlyResults = results.size > 0 && entries.at(-1)?.role === "tool";
  const retried = onlyResults ? await runThatTookResults(deps, sessionKey, [...results.keys()], caller) : undefined;
  if (retried) return retried;
  if (run && waiting.length > 0) await abortRun(deps, run.runId, "a new OpenAI API request on the session did not answer its client tool calls");
  return undefined;
}

async function resume(deps: RunDeps, run: RunRecord, answered: readonly ExternalInput[], results: Map<string, string>): Promise<ResumedRun> {
  const afterSeq = await lastEventSeq(deps.db, run.runId);
  for (const input of answered) {
    try {
      await resolveClientToolResult(deps, run, input.toolCallId, results.get(input.toolCallId)!, false, afterSeq);
    } catch (error) {
      // Answered meanwhile (a retried request racing this one): the run continues once either way.
      if (!(error instanceof ApiError && error.code === "APPROVAL_CONFLICT")) throw error;
    }
  }
  return resumedRun(run, afterSeq);
}

/**
 * The session's run (still active, or the last one) whose client tool calls
 * `callIds` were all answered already: what a retried request resumed. Its
 * continuation is followed from where the first request followed it.
 */
async function runThatTookResults(deps: RunDeps, sessionKey: string, callIds: readonly string[], caller: Caller | undefined): Promise<ResumedRun | undefined> {
  const { activeRunId } = await getLane(deps.db, sessionKey);
  const candidates = new Set([activeRunId, (await getSession(deps.db, sessionKey))?.lastRunId].filter((id): id is string => Boolean(id)));
  for (const runId of candidates) {
    const run = await getRun(deps.db, runId);
    if (!run || (caller && !owns(caller, run))) continue;
    const inputs = await Promise.all(callIds.map((callId) => getExternalInput(deps.db, runId, callId)));
    const taken = inputs.every((input) => input?.kind === "client_tool" && input.status === "resolved");
    if (!taken) continue;
    const afterSeq = Math.min(...inputs.map((input) => input?.resumedAfterSeq ?? 0));
    return resumedRun(run, afterSeq);
  }
  return undefined;
}

function resumedRun(run: RunRecord, afterSeq: number): ResumedRun {
  return { runId: run.runId, acceptedAt: run.acceptedAt, sessionKey: run.sessionKey, afterSeq };
}

async function waitingRun(deps: RunDeps, sessionKey: string, caller: Caller | undefined): Promise<RunRecord | undefined> {
  const { activeRunId } = await getLane(deps.db, sessionKey);
  const run = activeRunId ? await getRun(deps.db, activeRunId) : undefined;
  if (!run || TERMINAL_STATUSES.has(run.status) || (caller && !owns(caller, run))) return undefined;
  return run.status === "paused" ? run : undefined;
}
