import { getExternalInput, pendingInputsOf, resolveExternalInput } from "../aws/external-inputs";
import { resolveRefusal, type ExternalInput } from "../core/external-input";
import { TERMINAL_STATUSES, type RunRecord } from "../aws/runs";
import { ApiError } from "../protocol/errors";
import type { RunDeps } from "./deps";

export interface ClientToolResolved {
  runId: string;
  toolCallId: string;
  /** True when this answer woke the paused run (false: the pause task had not parked its token yet; it wakes the run itself). */
  woke: boolean;
}

/**
 * A client's result for a client tool call (REST `tool-results`, WS
 * `tools.result`). Durable and once: the result is stored by one conditional
 * write before the run is woken (SendTaskSuccess with the parked token), so a
 * crash in between loses nothing (the run wakes at the call's deadline at the
 * latest and reads the stored result). A second answer is 409 `already_resolved`
 * and never continues the run twice: it only re-sends the parked token, which
 * a task already woken refuses (TaskTimedOut), so a crash between store and
 * wake heals on the client's retry. A tool call id the run never paused for
 * is 409 `unknown_tool_call` (the run itself is checked by the caller: 404).
 */
export async function resolveClientToolResult(
  deps: RunDeps,
  run: Pick<RunRecord, "runId" | "status">,
  toolCallId: string,
  result: string,
  isError = false,
  /** The OpenAI API's resume point, kept with the answer (ExternalInput.resumedAfterSeq). */
  resumedAfterSeq?: number,
): Promise<ClientToolResolved> {
  const { runId } = run;
  // An ended run takes no more answers; the call's own state says why when it has one (expired, answered).
  if (TERMINAL_STATUSES.has(run.status)) {
    const input = await getExternalInput(deps.db, runId, toolCallId);
    const refusal = input ? resolveRefusal(input, "client_tool", deps.db.now()) : undefined;
    if (refusal) throw new ApiError("APPROVAL_CONFLICT", refusal.message, { reason: refusal.code });
    throw new ApiError("APPROVAL_CONFLICT", `Run ${runId} has ended (${run.status}).`, { reason: "run_ended" });
  }
  const resolved = await resolveExternalInput(deps.db, runId, toolCallId, "client_tool", { result, isError }, resumedAfterSeq === undefined ? {} : { resumedAfterSeq });
  if (!resolved.ok) {
    const { code, message } = resolved.refusal;
    if (code === "not_found") throw new ApiError("APPROVAL_CONFLICT", `Run ${runId} is not waiting for client tool call ${toolCallId}.`, { reason: "unknown_tool_call" });
    if (code === "already_resolved") await wake(deps, await getExternalInput(deps.db, runId, toolCallId));
    throw new ApiError("APPROVAL_CONFLICT", message, { reason: code });
  }
  return { runId, toolCallId, woke: await wake(deps, resolved.input) };
}

/** The last answer of a pause wakes the run: client tool calls of one turn wait together (shared/run/pause-for-input.ts). */
async function wake(deps: RunDeps, input: ExternalInput | undefined): Promise<boolean> {
  if (!input?.taskToken) return false;
  const othersWaiting = (await pendingInputsOf(deps.db, input.runId)).some((other) => other.kind === "client_tool" && other.inputId !== input.inputId);
  if (othersWaiting) return false;
  if (!deps.executions.answerTask) throw new Error("answerTask is not configured for this function");
  return deps.executions.answerTask(input.taskToken, { toolCallId: input.toolCallId });
}
