import type { AssistantMessage } from "../core/messages";

/**
 * The tool-call ledger (mission "Run tool side effects at most once"), keyed
 * by tool call id within a run. Only mutating tools are recorded.
 *
 * Timeline of one mutating call:
 *   1. savePendingTurn  the assistant turn that asked for the calls (not yet in the transcript)
 *   2. markStarted      per call, before it runs           (conditional: the entry must be absent)
 *   3. markCompleted    per call, with the result it gave   (conditional: the entry must be `started`)
 *   4. commit the turn to the transcript, then clearPendingTurn
 * A Lambda that dies anywhere in 1..4 leaves enough behind for the next
 * attempt of the run to resume the pending turn instead of asking the model
 * again: completed calls are replayed from the ledger, a call that is
 * `started` but not completed is uncertain (it may have taken effect) and is
 * reported to the model and the caller instead of being run again.
 */
export interface LedgerResult {
  content: string;
  isError: boolean;
}

export type LedgerEntry =
  | { toolCallId: string; toolName: string; status: "started"; startedAt: number }
  | { toolCallId: string; toolName: string; status: "completed"; startedAt: number; completedAt: number; result: LedgerResult };

export interface PendingTurn {
  message: AssistantMessage;
  createdAt: number;
}

export interface ToolLedger {
  get(toolCallId: string): Promise<LedgerEntry | undefined>;
  /** False when an entry already exists (another attempt got there first). */
  markStarted(toolCallId: string, toolName: string): Promise<boolean>;
  markCompleted(toolCallId: string, result: LedgerResult): Promise<void>;
  savePendingTurn(message: AssistantMessage): Promise<void>;
  loadPendingTurn(): Promise<PendingTurn | undefined>;
  clearPendingTurn(): Promise<void>;
}

export const UNCERTAIN_TOOL_RESULT =
  "This tool call was interrupted in an earlier attempt while it was running. It may or may not have taken effect, " +
  "so it was not run again. Check its effect before repeating it.";

/** In-process ledger: for tests and for runs that need no durability (nothing mutating). */
export function createMemoryLedger(now: () => number = Date.now): ToolLedger & { entries: Map<string, LedgerEntry> } {
  const entries = new Map<string, LedgerEntry>();
  let pending: PendingTurn | undefined;
  return {
    entries,
    get: async (id) => entries.get(id),
    markStarted: async (toolCallId, toolName) => {
      if (entries.has(toolCallId)) return false;
      entries.set(toolCallId, { toolCallId, toolName, status: "started", startedAt: now() });
      return true;
    },
    markCompleted: async (toolCallId, result) => {
      const entry = entries.get(toolCallId);
      if (entry?.status !== "started") return;
      entries.set(toolCallId, { ...entry, status: "completed", completedAt: now(), result });
    },
    savePendingTurn: async (message) => {
      pending = { message, createdAt: now() };
    },
    loadPendingTurn: async () => pending,
    clearPendingTurn: async () => {
      pending = undefined;
    },
  };
}
