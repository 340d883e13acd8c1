import { rememberAllowAlways, resolveExternalInput, runIdOfApprovalId } from "../aws/external-inputs";
import type { ApprovalDecision } from "../core/external-input";
import { RunEventEmitter } from "../events/emitter";
import { approvalResolvedData } from "../protocol/approval-frames";
import { ApiError } from "../protocol/errors";
import type { RunDeps } from "./deps";
import { emitterDeps } from "./start-run";

export interface ApprovalResolved {
  runId: string;
  approvalId: string;
  decision: ApprovalDecision;
}

/**
 * A human's answer to a pending approval (REST and the WebSocket resolve
 * methods): stored once, before the deadline, by one conditional write
 * (else 404 / 409 with the refusal's message); `allow-always` is remembered
 * for the tool in the session before the run wakes, then `phase: "resolved"`
 * goes out and the waiting task gets its SendTaskSuccess. The next attempt
 * reads the answer from the record and runs or denies the call.
 */
export async function resolveApproval(deps: RunDeps, approvalId: string, decision: ApprovalDecision, runId = runIdOfApprovalId(approvalId)): Promise<ApprovalResolved> {
  if (!runId) throw new ApiError("NOT_FOUND", `No pending approval ${approvalId}.`);
  const result = await resolveExternalInput(deps.db, runId, approvalId, "approval", { decision });
  if (!result.ok) {
    const { code, message } = result.refusal;
    throw code === "not_found" ? new ApiError("NOT_FOUND", message) : new ApiError("APPROVAL_CONFLICT", message, { reason: code });
  }
  const input = result.input;
  if (decision === "allow-always") await rememberAllowAlways(deps.db, input.sessionKey, input.toolName);
  const emitter = await RunEventEmitter.open(emitterDeps(deps), runId, input.sessionKey, { streamsText: false });
  emitter.emit("approval", approvalResolvedData(approvalId, decision));
  await emitter.flush();
  // No token yet: the pause task has not parked it; it finds the answer and wakes the run itself.
  if (input.taskToken) {
    if (!deps.executions.answerTask) throw new Error("answerTask is not configured for this function");
    await deps.executions.answerTask(input.taskToken, { decision });
  }
  return { runId, approvalId, decision };
}
