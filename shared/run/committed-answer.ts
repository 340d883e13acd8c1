import type { AttemptReport } from "../agent/attempt";
import type { Message } from "../core/messages";

/**
 * A fresh attempt after a crash (a Lambda died after committing the run's
 * final answer, before the step returned): the transcript already ends with
 * this run's assistant message and it asks for no tool. Calling the model
 * again would answer twice; the durable state says the attempt completed, so
 * the report is rebuilt from that message instead.
 */
export function committedAnswer(tail: { lastRunId?: string; lastMessage?: Message }, runId: string): AttemptReport | undefined {
  const message = tail.lastMessage;
  if (tail.lastRunId !== runId || message?.role !== "assistant") return undefined;
  const blocks = Array.isArray(message.content) ? message.content : [];
  if (blocks.some((block) => block.type === "tool_call")) return undefined;
  const textBlocks = blocks.filter((block): block is { type: "text"; text: string } => block.type === "text").map((block) => block.text);
  if (textBlocks.length === 0) return undefined;
  const zero = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
  return {
    v: 1,
    outcome: { kind: "completed" },
    textBlocks,
    finalText: textBlocks.join(""),
    tools: [],
    toolErrors: [],
    messagingToolTexts: [],
    usage: zero,
    wastedUsage: zero,
    costUsd: 0,
    modelTurns: 0,
    toolCalls: 0,
    compactionCount: 0,
    hadSideEffects: false,
    uncertainToolCalls: [],
    stopReason: "recovered",
  };
}
