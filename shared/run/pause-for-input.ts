import * as z from "zod";
import { attachTaskToken } from "../aws/external-inputs";
import { readAbortRequestedAt } from "../aws/abort-flag";
import { markPaused } from "../aws/runs";
import { clientToolStartData } from "../protocol/client-tools";
import { RunEventEmitter } from "../events/emitter";
import { approvalRequestedData } from "../protocol/approval-frames";
import type { RunDeps } from "./deps";
import { emitterDeps } from "./start-run";

/** The PauseForInput task's payload (infra/state-machine.ts): pointers and the task token only. */
export const PauseInputSchema = z.object({
  action: z.literal("pause_for_input"),
  runId: z.string().min(1),
  inputId: z.string().min(1),
  taskToken: z.string().min(1),
});
export type PauseInput = z.infer<typeof PauseInputSchema>;

/**
 * The run waits for an external input with no code running. Order matters:
 * the run is `paused` before the token is parked, so an answer (which wakes
 * the next attempt, which sets it `running` again) can never come before the
 * pause is recorded. An input answered before its token arrived is answered
 * here: the task is woken at once, and so is one whose run was asked to abort
 * (abortRun wakes parked tokens; this covers an abort before the token was
 * parked). Only then do clients learn of the request (the approval request,
 * or a client tool's `tool` start event), so whoever answers finds the token parked.
 */
export async function pauseForInput(deps: RunDeps, input: PauseInput): Promise<"waiting" | "answered"> {
  await markPaused(deps.db, input.runId);
  const record = await attachTaskToken(deps.db, input.runId, input.inputId, input.taskToken);
  if (!record || record.status === "resolved") {
    await wake(deps, input.taskToken);
    return "answered";
  }
  // An abort that came while the pause was on its way found no token to wake: this one sees its flag.
  if (await abortRequested(deps, input.runId)) {
    await wake(deps, input.taskToken);
    return "answered";
  }
  const emitter = await RunEventEmitter.open(emitterDeps(deps), input.runId, record.sessionKey);
  if (record.kind === "approval") emitter.emit("approval", { ...approvalRequestedData(record), createdAt: record.createdAt });
  else emitter.emit("tool", clientToolStartData(record.toolName, record.toolCallId, record.args, record.deadlineAt));
  await emitter.flush();
  return "waiting";
}

async function abortRequested(deps: RunDeps, runId: string): Promise<boolean> {
  return (await readAbortRequestedAt(deps.db, runId)) !== undefined;
}

async function wake(deps: RunDeps, taskToken: string): Promise<void> {
  if (!deps.executions.answerTask) throw new Error("answerTask is not configured for this function");
  await deps.executions.answerTask(taskToken, { resumed: true });
}
