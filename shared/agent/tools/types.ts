import type { ToolSpec } from "../../providers/types";

export interface ToolContext {
  runId: string;
  sessionKey: string;
  signal: AbortSignal;
}

export interface ToolOutput {
  content: string;
  isError?: boolean;
}

/**
 * A tool the agent can call. `mutating` marks side effects: a retried attempt
 * must never blindly re-run a mutating call (see the tool-call ledger).
 */
export interface ToolDefinition extends ToolSpec {
  mutating: boolean;
  execute(args: Record<string, unknown>, context: ToolContext): Promise<ToolOutput>;
}

/** Thrown by a tool to report a failure the model should see (not a crash). */
export class ToolInputError extends Error {
  override readonly name = "ToolInputError";
}
