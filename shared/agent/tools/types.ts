import type { ToolSpec } from "../../providers/types";

export interface ToolContext {
  runId: string;
  sessionKey: string;
  signal: AbortSignal;
  /** The call being executed (set by the lifecycle). */
  toolCallId?: string;
  /** Streams partial output of a long-running tool (`tool` `update` events). */
  onUpdate?(partial: string): void;
}

export interface ToolOutput {
  content: string;
  isError?: boolean;
  /** Texts this call delivered to the user (messaging tools); reply shaping removes duplicates. */
  sentMessages?: string[];
}

/**
 * A tool the agent can call. `mutating` marks side effects: such calls go
 * through the tool-call ledger, so a retried attempt never re-runs a
 * completed one and an interrupted one is reported as uncertain instead of
 * being run again.
 */
export interface ToolDefinition extends ToolSpec {
  mutating: boolean;
  /** Runs on the client (a client tool, docs/client-tools.md): the run pauses for its result; its start event comes from the pause. */
  client?: boolean;
  /** Overrides the configured per-call time limit. */
  timeoutMs?: number;
  execute(args: Record<string, unknown>, context: ToolContext): Promise<ToolOutput>;
}

/** Thrown by a tool to report a failure the model should see (not a crash). */
export class ToolInputError extends Error {
  override readonly name: string = "ToolInputError";
}
