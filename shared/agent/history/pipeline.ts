import type { Message } from "../../core/messages";
import { assembleContext, type ContextEngine } from "./context-engine";
import { limitHistoryTurns } from "./limit-turns";
import { repairToolUseResultPairing, RESPONSES_MISSING_RESULT } from "./repair-pairing";
import { sanitizeHistory } from "./sanitize";
import { validateProviderTurns, type ProviderApi } from "./validate-turns";

/**
 * The history chain every attempt runs on the latest committed transcript
 * (seed 002 layer 9; reference §E.43), in this order:
 *   sanitize -> validate provider turn rules -> limit history turns
 *   -> repair tool_use/tool_result pairing -> context assembly
 * The order is a contract: limiting can orphan tool results, so pairing
 * repair must come after it; assembly sees only a valid history.
 */
export const HISTORY_STEPS = ["sanitize", "validate_turns", "limit_turns", "repair_pairing", "assemble"] as const;
export type HistoryStep = (typeof HISTORY_STEPS)[number];

export interface HistoryOptions {
  api: ProviderApi;
  historyTurnLimit: number;
  engine: ContextEngine;
  tokenBudget: number;
  availableTools: readonly string[];
  /** Strict user/assistant alternation for every provider (the loop's role-ordering repair). */
  strictTurns?: boolean;
}

export interface PreparedHistory {
  messages: Message[];
  systemPromptAddition?: string;
  /** Messages after each step, for diagnostics and tests. */
  trace: { step: HistoryStep; count: number }[];
  repairs: { droppedResults: number; synthesizedResults: number; droppedCalls: number };
  engineFailure?: string;
}

export async function prepareHistory(transcript: readonly Message[], options: HistoryOptions): Promise<PreparedHistory> {
  const trace: PreparedHistory["trace"] = [];
  const record = (step: HistoryStep, messages: Message[]) => {
    trace.push({ step, count: messages.length });
    return messages;
  };
  const sanitized = record("sanitize", sanitizeHistory(transcript));
  const validated = record("validate_turns", validateProviderTurns(sanitized, options.api, { strict: options.strictTurns === true }));
  const limited = record("limit_turns", limitHistoryTurns(validated, options.historyTurnLimit));
  const repair = repairToolUseResultPairing(limited, {
    erroredAssistantResultPolicy: "drop",
    ...(options.api === "openai-responses" ? { missingToolResultText: RESPONSES_MISSING_RESULT } : {}),
  });
  record("repair_pairing", repair.messages);
  const assembled = await assembleContext(options.engine, {
    messages: repair.messages,
    tokenBudget: options.tokenBudget,
    availableTools: options.availableTools,
    prompt: lastUserText(repair.messages),
  });
  record("assemble", assembled.messages);
  const { droppedResults, synthesizedResults, droppedCalls } = repair;
  return {
    messages: assembled.messages,
    ...(assembled.systemPromptAddition ? { systemPromptAddition: assembled.systemPromptAddition } : {}),
    trace,
    repairs: { droppedResults, synthesizedResults, droppedCalls },
    ...(assembled.failure ? { engineFailure: assembled.failure } : {}),
  };
}

function lastUserText(messages: readonly Message[]): string {
  for (let i = messages.length - 1; i >= 0; i -= 1) {
    const message = messages[i];
    if (message.role === "user") return message.content;
  }
  return "";
}
