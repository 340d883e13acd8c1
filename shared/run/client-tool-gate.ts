import type { ApprovalGate, GateVerdict } from "../agent/tools/approval-gate";
import type { ToolDefinition } from "../agent/tools/types";
import type { Db } from "../aws/dynamo";
import { createPendingInput, getExternalInput } from "../aws/external-inputs";
import type { RunRecord } from "../aws/runs";
import { DEFAULT_CLIENT_TOOL_TIMEOUT_SECONDS, resumedCall } from "../core/external-input";

/** Said to the model if a client tool's code is ever reached (it never is: the gate answers first). */
export const CLIENT_TOOL_NOT_ANSWERED = "Error: this tool runs on the client and has no result.";

/** The run's client tools as tools the model is offered; `client: true` makes the gate pause for them. */
export function clientToolDefinitions(run: Pick<RunRecord, "clientTools">): ToolDefinition[] {
  return (run.clientTools ?? []).map((tool) => ({
    name: tool.name,
    description: tool.description,
    parameters: tool.parameters,
    // At most once by construction: the client's answer is stored once and replayed from its record.
    mutating: false,
    client: true,
    execute: async () => ({ content: CLIENT_TOOL_NOT_ANSWERED, isError: true }),
  }));
}

/**
 * Client tool calls on the external-input records (docs/client-tools.md):
 * the input id is the tool call id (what the client answers with). A call
 * with an answer takes it; one without gets its pending record and pauses
 * the attempt; past the deadline it is `Client tool timed out`. Every other
 * call goes to the approval gate.
 */
export function withClientTools(db: Db, run: Pick<RunRecord, "runId" | "sessionKey" | "clientTools" | "clientToolTimeoutSeconds">, approvals: ApprovalGate): ApprovalGate {
  const names = new Set((run.clientTools ?? []).map((tool) => tool.name));
  if (names.size === 0) return approvals;
  const timeoutSeconds = run.clientToolTimeoutSeconds ?? DEFAULT_CLIENT_TOOL_TIMEOUT_SECONDS;
  return {
    async check(call): Promise<GateVerdict> {
      if (!names.has(call.toolName)) return approvals.check(call);
      const now = db.now();
      const input =
        (await getExternalInput(db, run.runId, call.toolCallId)) ??
        (await createPendingInput(db, {
          runId: run.runId,
          sessionKey: run.sessionKey,
          inputId: call.toolCallId,
          kind: "client_tool",
          toolCallId: call.toolCallId,
          toolName: call.toolName,
          args: call.args,
          createdAt: now,
          deadlineAt: now + timeoutSeconds * 1000,
        }));
      const resumed = resumedCall(input, now);
      if (resumed === "still_waiting") return { kind: "pause", inputId: input.inputId, timeoutSeconds: Math.max(1, Math.ceil((input.deadlineAt - now) / 1000)) };
      if (resumed.run) return { kind: "answered", content: CLIENT_TOOL_NOT_ANSWERED, isError: true };
      return { kind: "answered", content: resumed.content, isError: resumed.isError, status: resumed.isError ? "failed" : "completed" };
    },
  };
}
