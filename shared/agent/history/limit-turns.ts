import type { Message } from "../../core/messages";

/**
 * Step 3 of the history chain: keep only the last `limit` user turns (a user
 * message and everything after it up to the next user message). 0 keeps all.
 * Cutting can orphan a tool result whose assistant turn fell off the front;
 * the pairing step that follows is what makes this safe.
 */
export function limitHistoryTurns(messages: readonly Message[], limit: number): Message[] {
  if (limit <= 0) return [...messages];
  const userIndexes = messages.flatMap((message, index) => (message.role === "user" ? [index] : []));
  if (userIndexes.length <= limit) return [...messages];
  return messages.slice(userIndexes[userIndexes.length - limit]);
}
