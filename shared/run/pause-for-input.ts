import * as z from "zod";
import { attachTaskToken, pendingInputsOf } from "../aws/external-inputs";
import type { ExternalInput } from "../core/external-input";
import { readAbortRequestedAt } from "../aws/abort-flag";
import { markPaused } from "../aws/runs";
import { clientToolStartData } from "../protocol/client-tools";
import { RunEventEmitter } from "../events/emitter";
import { approvalRequestedData } from "../protocol/approval-frames";
import type { RunDeps } from "./deps";
import { emitterDeps } from "./start-run";

/** The PauseForInput task's payload (infra/state-machine.ts): pointers and the task token only. */
export const PauseInputSchema = z.lazy(() => z.object({
  action: z.literal("pause_for_input"),
  runId: z.string().min(1),
  inputId: z.string().min(1),
  taskToken: z.string().min(1),
}));
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
 * The client tool calls of one turn pause together: all their start events
 * go out at once, and the run wakes when the last of them is answered.
 */
export async function pauseForInput(deps: RunDeps, input: PauseInput): Promise<"waiting" | "answered"> {
  await markPaused(deps.db, input.runId);
  const record = await attachTaskToken(deps.db, input.runId, input.inputId, input.taskToken);
  // Client tool calls of one turn share the pause: each parks the token, the last answer wakes the run.
  const waiting = record?.kind === "client_tool" ? await parkOnClientCalls(deps, input) : record?.status === "pending" ? [record] : [];
  if (waiting.length === 0) {
    await wake(deps, input.taskToken);
    return "answered";
  }
  // An abort that came while the pause was on its way found no token to wake: this one sees its flag.
  if (await abortRequested(deps, input.runId)) {
    await wake(deps, input.taskToken);
    return "answered";
  }
  const emitter = await RunEventEmitter.open(emitterDeps(deps), input.runId, waiting[0].sessionKey, { streamsText: false });
  for (const pending of waiting) {
    if (pending.kind === "approval") emitter.emit("approval", { ...approvalRequestedData(pending), createdAt: pending.createdAt });
    else emitter.emit("tool", clientToolStartData(pending.toolName, pending.toolCallId, pending.args, pending.deadlineAt));
  }
  await emitter.flush();
  return "waiting";
}

/** Parks the token on every client tool call of the run still waiting; those are handed out together. */
async function parkOnClientCalls(deps: RunDeps, input: PauseInput): Promise<ExternalInput[]> {
  const calls = (await pendingInputsOf(deps.db, input.runId)).filter((pending) => pending.kind === "client_tool");
  const parked = await Promise.all(calls.map((call) => attachTaskToken(deps.db, input.runId, call.inputId, input.taskToken)));
  return parked.filter((call): call is ExternalInput => call?.status === "pending");
}

async function abortRequested(deps: RunDeps, runId: string): Promise<boolean> {
  return (await readAbortRequestedAt(deps.db, runId)) !== undefined;
}

async function wake(deps: RunDeps, taskToken: string): Promise<void> {
  if (!deps.executions.answerTask) throw new Error("answerTask is not configured for this function");
  await deps.executions.answerTask(taskToken, { resumed: true });
}
