import { addUsage, assistantText, toolCallsOf, ZERO_USAGE, type AssistantMessage, type Message, type ToolCallBlock, type ToolResultMessage, type Usage } from "../core/messages";
import type { ProviderFailure } from "../core/failures";
import type { AttemptOutcome } from "../core/run-loop";
import type { ModelProvider } from "../providers/types";
import { executeToolCall } from "./tools/execute";
import type { ToolContext, ToolDefinition } from "./tools/types";

/** Where an attempt reports what happens while it runs (events to clients). */
export interface AttemptSink {
  assistantDelta(delta: string): void;
  thinkingDelta(delta: string): void;
  toolStart(call: ToolCallBlock): void;
  toolResult(call: ToolCallBlock, result: ToolResultMessage): void;
}

export interface AttemptParams {
  provider: ModelProvider;
  model: string;
  system: string;
  /** The committed transcript: an attempt always starts from the latest stable state. */
  history: Message[];
  tools: ReadonlyMap<string, ToolDefinition>;
  /** Persists one complete turn (validated against the transcript invariants). */
  commitTurn(turn: Message[]): Promise<void>;
  sink: AttemptSink;
  toolContext: ToolContext;
  idleTimeoutMs?: number;
  maxOutputTokens?: number;
  maxToolRounds: number;
  maxToolResultChars: number;
  /** True when the attempt should stop at the next boundary (Lambda deadline near). */
  shouldYield(): boolean;
}

export interface AttemptReport {
  outcome: AttemptOutcome;
  /** Visible text of the terminal assistant answer (empty unless completed). */
  finalText: string;
  usage: Usage;
  modelTurns: number;
  toolCalls: number;
  toolErrors: { toolName: string; message: string }[];
  stopReason?: string;
}

type TurnResult = { ok: true; message: AssistantMessage } | { ok: false; failure: ProviderFailure; partial: AssistantMessage };

/**
 * The model <-> tool loop of one attempt: call the model, run the tools it
 * asked for, commit each complete turn, repeat until a terminal answer. All
 * variable parts are injected, so it runs the same with a scripted model in a
 * test and with a real provider in the attempt Lambda.
 */
export async function runAttempt(params: AttemptParams): Promise<AttemptReport> {
  const report: AttemptReport = { outcome: { kind: "yielded" }, finalText: "", usage: ZERO_USAGE, modelTurns: 0, toolCalls: 0, toolErrors: [] };
  const messages = [...params.history];
  for (let round = 0; round < params.maxToolRounds; round += 1) {
    if (params.toolContext.signal.aborted) return { ...report, outcome: { kind: "aborted" } };
    if (params.shouldYield()) return report;
    const turn = await streamTurn(params, messages);
    if (!turn.ok) {
      report.usage = addUsage(report.usage, turn.partial.usage);
      const outcome: AttemptOutcome =
        turn.failure.kind === "aborted"
          ? { kind: "aborted" }
          : { kind: "failed", failure: turn.failure, completedModelProgress: report.modelTurns > 0 };
      return { ...report, outcome };
    }
    report.modelTurns += 1;
    report.usage = addUsage(report.usage, turn.message.usage);
    report.stopReason = turn.message.rawStopReason ?? turn.message.stopReason;
    const calls = toolCallsOf(turn.message);
    if (calls.length === 0) return finishWithAnswer(params, report, turn.message);
    const results = await runTools(params, calls, report);
    await params.commitTurn([turn.message, ...results]);
    messages.push(turn.message, ...results);
  }
  return report;
}

async function finishWithAnswer(params: AttemptParams, report: AttemptReport, message: AssistantMessage): Promise<AttemptReport> {
  const text = assistantText(message);
  if (text.trim() === "") {
    const reasoned = message.content.some((block) => block.type === "thinking" && block.text.trim() !== "");
    return { ...report, outcome: { kind: reasoned ? "reasoning_only" : "empty_response" } };
  }
  await params.commitTurn([message]);
  return { ...report, outcome: { kind: "completed" }, finalText: text };
}

async function streamTurn(params: AttemptParams, messages: Message[]): Promise<TurnResult> {
  const stream = params.provider.stream({
    model: params.model,
    system: params.system,
    messages,
    tools: [...params.tools.values()].map(({ name, description, parameters }) => ({ name, description, parameters })),
    maxOutputTokens: params.maxOutputTokens,
    signal: params.toolContext.signal,
    idleTimeoutMs: params.idleTimeoutMs,
  });
  for await (const event of stream) {
    if (event.type === "text-delta") params.sink.assistantDelta(event.text);
    else if (event.type === "thinking-delta") params.sink.thinkingDelta(event.text);
    else if (event.type === "end") return { ok: true, message: event.message };
    else if (event.type === "error") return { ok: false, failure: event.failure, partial: event.partial };
  }
  // The provider contract says this cannot happen; treat it as a classified failure, not a crash.
  return {
    ok: false,
    failure: { kind: "unknown", message: "model stream ended without a terminal event", retryable: true, responseStarted: true },
    partial: { role: "assistant", content: [], provider: params.provider.id, model: params.model, stopReason: "error", usage: ZERO_USAGE },
  };
}

async function runTools(params: AttemptParams, calls: ToolCallBlock[], report: AttemptReport): Promise<ToolResultMessage[]> {
  const results: ToolResultMessage[] = [];
  for (const call of calls) {
    params.sink.toolStart(call);
    const result = await executeToolCall(params.tools, call, params.toolContext, params.maxToolResultChars);
    report.toolCalls += 1;
    if (result.isError) report.toolErrors.push({ toolName: call.name, message: result.content });
    params.sink.toolResult(call, result);
    results.push(result);
  }
  return results;
}
