import type { AssistantMessage, Message, ToolResultMessage } from "./messages";

/**
 * The one tool_use/tool_result pairing repair (pure): the history chain runs
 * it on every attempt (agent/history/pipeline.ts, step 4) and every provider
 * conversion runs it again on what it is handed (providers/transform-messages.ts),
 * with the same rules, so a history is repaired the same way wherever it goes.
 */

/** Text of a synthesized result: every provider rejects an unanswered call. */
export const MISSING_TOOL_RESULT = "No result was recorded for this tool call (the run was interrupted before it finished).";

/** Synthesized for the OpenAI Responses API, which wants exactly this for a call that never finished. */
export const RESPONSES_MISSING_RESULT = "aborted";

export interface PairingOptions {
  /**
   * `drop`: an assistant turn that ended in an error (or was aborted) loses its
   * tool calls and their results: the calls were never meant to be answered,
   * and replaying them invites the model to act on a broken turn.
   */
  erroredAssistantResultPolicy: "drop" | "keep";
  /** Text of the synthetic result for a call that has none (default: a neutral explanation). */
  missingToolResultText?: string;
}

export interface PairingRepair {
  messages: Message[];
  droppedResults: number;
  synthesizedResults: number;
  droppedCalls: number;
}

/**
 * repairAttemptToolUseResultPairing: every tool call is answered exactly
 * once, right after its assistant turn.
 * Results found later in the history are moved up; orphans and duplicates
 * are dropped; missing ones are synthesized as error results.
 */
export function repairToolUseResultPairing(messages: readonly Message[], options: PairingOptions): PairingRepair {
  const firstResultById = new Map<string, ToolResultMessage>();
  for (const message of messages) {
    if (message.role === "tool_result" && !firstResultById.has(message.toolCallId)) firstResultById.set(message.toolCallId, message);
  }
  const report: PairingRepair = { messages: [], droppedResults: 0, synthesizedResults: 0, droppedCalls: 0 };
  const used = new Set<string>();
  for (const message of messages) {
    if (message.role === "tool_result") continue; // re-emitted after their call below
    if (message.role === "user") {
      report.messages.push(message);
      continue;
    }
    const assistant = stripErroredCalls(message, options, report);
    if (!assistant) continue;
    report.messages.push(assistant);
    for (const block of assistant.content) {
      if (block.type !== "tool_call" || used.has(block.id)) continue;
      used.add(block.id);
      const found = firstResultById.get(block.id);
      if (found) report.messages.push(found);
      else {
        report.synthesizedResults += 1;
        report.messages.push(missingResult(block.id, block.name, options));
      }
    }
  }
  const results = messages.filter((m) => m.role === "tool_result").length;
  report.droppedResults = results - report.messages.filter((m) => m.role === "tool_result").length + report.synthesizedResults;
  return report;
}

function stripErroredCalls(message: AssistantMessage, options: PairingOptions, report: PairingRepair): AssistantMessage | undefined {
  const errored = message.stopReason === "error" || message.stopReason === "aborted";
  if (!errored || options.erroredAssistantResultPolicy === "keep") return message;
  const content = message.content.filter((block) => block.type !== "tool_call");
  report.droppedCalls += message.content.length - content.length;
  return content.length > 0 ? { ...message, content } : undefined;
}

function missingResult(toolCallId: string, toolName: string, options: PairingOptions): ToolResultMessage {
  return { role: "tool_result", toolCallId, toolName, content: options.missingToolResultText ?? MISSING_TOOL_RESULT, isError: true };
}
