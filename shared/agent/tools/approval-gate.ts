import type { ApprovalRequest } from "../../core/external-input";

/**
 * The port through which a tool call asks "may I run now?" before its code
 * runs (docs/approvals.md). `pause`: the attempt stops before the call and
 * the run waits for `inputId` with no code running; `answered`: the call
 * ends with this result instead of running (denied, timed out).
 */
export type GateVerdict =
  | { kind: "proceed" }
  /** `status`: how the call is recorded (default `blocked`: a denial or timeout; a client's result is `completed` / `failed`). */
  | { kind: "answered"; content: string; isError: boolean; status?: "blocked" | "completed" | "failed" }
  | { kind: "pause"; inputId: string; timeoutSeconds: number };

export interface GateCall {
  toolName: string;
  toolCallId: string;
  args: Record<string, unknown>;
  /** A before_tool_call hook's requireApproval. */
  fromHook?: ApprovalRequest;
}

export interface ApprovalGate {
  check(call: GateCall): Promise<GateVerdict>;
}
