import { addUsage, ZERO_USAGE, type AssistantMessage, type TextBlock, type Usage } from "../core/messages";
import type { AttemptResult, ToolMeta } from "../core/attempt-result";
import type { AttemptOutcome } from "../core/run-loop";
import type { ToolCallOutcome } from "./tools/lifecycle";

/**
 * Turns what happens during an attempt into the structured result (seed 002
 * layer 11: text blocks, tool meta, usage, compaction count, tool errors,
 * messaging-tool output). One instance per attempt.
 */
export class AttemptRecorder {
  private usage: Usage = ZERO_USAGE;
  private wasted: Usage = ZERO_USAGE;
  private cost = 0;
  private readonly tools: ToolMeta[] = [];
  private readonly toolErrors: { toolName: string; message: string }[] = [];
  private readonly sent: string[] = [];
  private textBlocks: string[] = [];
  private stopReason: string | undefined;
  private sideEffects = false;
  modelTurns = 0;
  /** Prompt-side tokens of the latest model call (what the provider counted). */
  lastPromptTokens: number | undefined;

  modelCall(usage: Usage, wasted: boolean, costUsd: number): void {
    this.usage = addUsage(this.usage, usage);
    if (wasted) this.wasted = addUsage(this.wasted, usage);
    this.cost += costUsd;
    const prompt = usage.input + usage.cacheRead + usage.cacheWrite;
    if (prompt > 0) this.lastPromptTokens = prompt;
  }

  modelTurn(message: AssistantMessage): void {
    this.modelTurns += 1;
    this.stopReason = message.rawStopReason ?? message.stopReason;
  }

  tool(outcome: ToolCallOutcome): void {
    this.tools.push(outcome.meta);
    this.sent.push(...outcome.sentMessages);
    // A mutating tool that ran, ran before (replayed), or may have run (uncertain) changed the world.
    const touched = outcome.executed || outcome.meta.status === "replayed" || outcome.meta.status === "uncertain";
    if (outcome.meta.mutating && touched) this.sideEffects = true;
    if (outcome.result.isError) this.toolErrors.push({ toolName: outcome.meta.name, message: outcome.result.content });
  }

  /** The terminal answer's visible text, block by block. */
  answer(message: AssistantMessage): void {
    this.textBlocks = message.content.filter((b): b is TextBlock => b.type === "text" && b.text.trim() !== "").map((b) => b.text);
  }

  /** A mutating tool ran (or may have): replay-type retries must not run. */
  get hadSideEffects(): boolean {
    return this.sideEffects;
  }

  get toolCallCount(): number {
    return this.tools.length;
  }

  build(outcome: AttemptOutcome): AttemptResult {
    const uncertain = this.tools.filter((t) => t.status === "uncertain");
    return {
      v: 1,
      outcome,
      textBlocks: outcome.kind === "completed" ? this.textBlocks : [],
      finalText: outcome.kind === "completed" ? this.textBlocks.join("") : "",
      tools: this.tools,
      toolErrors: this.toolErrors,
      messagingToolTexts: this.sent,
      usage: this.usage,
      wastedUsage: this.wasted,
      costUsd: this.cost,
      modelTurns: this.modelTurns,
      toolCalls: this.tools.length,
      compactionCount: 0,
      hadSideEffects: this.sideEffects,
      uncertainToolCalls: uncertain.map((t) => ({ toolCallId: t.toolCallId, name: t.name })),
      ...(this.stopReason !== undefined ? { stopReason: this.stopReason } : {}),
    };
  }
}
