import type { ApprovalGate, GateVerdict } from "../agent/tools/approval-gate";
import type { Db } from "../aws/dynamo";
import { approvalIdFor, createPendingInput, getExternalInput, isAllowedAlways } from "../aws/external-inputs";
import { approvalNeeded, resumedCall, type ExternalInput } from "../core/external-input";

/**
 * Approvals for one attempt, on the external-input records: a call that has
 * an answer (from an earlier attempt's pause) takes it; a call that needs
 * approval and has none gets a pending record and pauses the attempt. The
 * approval id is derived from the run and the call, so a retried attempt asks once.
 */
export type ApprovalRule = string | { tool: string; timeoutSeconds: number };

export function createApprovalGate(db: Db, run: { runId: string; sessionKey: string }, rules: readonly ApprovalRule[]): ApprovalGate {
  const patterns = rules.map((rule) => (typeof rule === "string" ? rule : rule.tool));
  return {
    async check(call): Promise<GateVerdict> {
      // Nothing asks for approvals: no read per call (records exist only where something asked).
      if (patterns.length === 0 && !call.fromHook) return { kind: "proceed" };
      const inputId = approvalIdFor(run.runId, call.toolCallId);
      const existing = await getExternalInput(db, run.runId, inputId);
      if (existing) return verdictOf(existing, db.now());
      const allowedAlways = await isAllowedAlways(db, run.sessionKey, call.toolName);
      const fromHook = call.fromHook ?? configuredTimeout(rules, call.toolName);
      const byConfig = approvalNeeded(call.toolName, { patterns, allowedAlways });
      const needed = approvalNeeded(call.toolName, { patterns, fromHook: byConfig || call.fromHook ? fromHook : undefined, allowedAlways });
      if (!needed) return { kind: "proceed" };
      const now = db.now();
      const input = await createPendingInput(db, {
        runId: run.runId,
        sessionKey: run.sessionKey,
        inputId,
        kind: "approval",
        toolCallId: call.toolCallId,
        toolName: call.toolName,
        args: call.args,
        title: needed.title,
        ...(needed.description ? { description: needed.description } : {}),
        createdAt: now,
        deadlineAt: now + needed.timeoutSeconds * 1000,
      });
      return verdictOf(input, now);
    },
  };
}

/** A `{tool, timeoutSeconds}` rule's deadline, as a request the rules understand. */
function configuredTimeout(rules: readonly ApprovalRule[], toolName: string): { timeoutSeconds: number } | undefined {
  for (const rule of rules) {
    if (typeof rule === "string") continue;
    const matches = rule.tool.endsWith("*") ? toolName.startsWith(rule.tool.slice(0, -1)) : toolName === rule.tool;
    if (matches) return { timeoutSeconds: rule.timeoutSeconds };
  }
  return undefined;
}

function verdictOf(input: ExternalInput, now: number): GateVerdict {
  const resumed = resumedCall(input, now);
  if (resumed === "still_waiting") return { kind: "pause", inputId: input.inputId, timeoutSeconds: Math.max(1, Math.ceil((input.deadlineAt - now) / 1000)) };
  return resumed.run ? { kind: "proceed" } : { kind: "answered", content: resumed.content, isError: resumed.isError };
}
