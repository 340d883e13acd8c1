import type { AssistantMessage } from "../../shared/core/messages";

/** A finished assistant text reply from the offline model, as a transcript entry holds it. */
export const assistantReply = (text: string): AssistantMessage => ({
  role: "assistant",
  content: [{ type: "text", text }],
  provider: "offline",
  model: "echo",
  stopReason: "stop",
  usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0 },
});
