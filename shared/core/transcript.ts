import { toolCallsOf, type Message } from "./messages";

/**
 * Transcript invariants, checked when a turn is committed (not repaired at read
 * time). They hold for both providers' rules:
 *  - a turn is [user], [assistant without tool calls], or
 *    [assistant with N tool calls, then exactly one result per call];
 *  - no tool_result without its tool_call, no tool_call left unanswered;
 *  - roles alternate: user -> assistant; assistant(text) -> user;
 *    tool results -> assistant or user. Consecutive user messages are allowed
 *    (a run that failed before answering leaves its user message; both
 *    providers accept them once merged by transform-messages).
 */
export type TurnViolation =
  | "empty_turn"
  | "turn_must_start_with_user_or_assistant"
  | "assistant_after_assistant"
  | "assistant_turn_has_extra_messages"
  | "unanswered_tool_call"
  | "orphan_tool_result"
  | "duplicate_tool_result"
  | "user_after_pending_tool_calls";

export function checkTurn(lastCommitted: Message | undefined, turn: Message[]): TurnViolation[] {
  if (turn.length === 0) return ["empty_turn"];
  const [head, ...rest] = turn;
  if (head.role === "tool_result") return ["orphan_tool_result"];
  const violations: TurnViolation[] = [...orderViolations(lastCommitted, head)];
  if (head.role === "user") {
    if (rest.length > 0) violations.push("assistant_turn_has_extra_messages");
    return violations;
  }
  return [...violations, ...toolPairingViolations(toolCallsOf(head).map((c) => c.id), rest)];
}

function orderViolations(last: Message | undefined, head: Message): TurnViolation[] {
  if (!last) return [];
  if (head.role === "assistant" && last.role === "assistant") return ["assistant_after_assistant"];
  if (head.role === "user" && last.role === "assistant" && toolCallsOf(last).length > 0) {
    return ["user_after_pending_tool_calls"];
  }
  return [];
}

function toolPairingViolations(callIds: string[], rest: Message[]): TurnViolation[] {
  const violations: TurnViolation[] = [];
  const expected = new Set(callIds);
  const seen = new Set<string>();
  for (const message of rest) {
    if (message.role !== "tool_result") {
      violations.push("assistant_turn_has_extra_messages");
      continue;
    }
    if (!expected.has(message.toolCallId)) violations.push("orphan_tool_result");
    else if (seen.has(message.toolCallId)) violations.push("duplicate_tool_result");
    seen.add(message.toolCallId);
  }
  if ([...expected].some((id) => !seen.has(id))) violations.push("unanswered_tool_call");
  return violations;
}
