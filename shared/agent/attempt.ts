import { assistantText, toolCallsOf, type AssistantMessage, type Message, type ToolCallBlock, type ToolResultMessage, type UserMessage } from "../core/messages";
import type { AttemptResult } from "../core/attempt-result";
import { checkContextGuard, contextChars, estimateTokens } from "../core/context-budget";
import type { AttemptOutcome, ThinkingLevel } from "../core/run-loop";
import type { HookRegistry } from "../hooks/registry";
import { EMPTY_HOOKS } from "../hooks/registry";
import type { ModelProvider } from "../providers/types";
import { AttemptRecorder } from "./attempt-recorder";
import { finalizeRevision } from "./finalize-revision";
import { streamModelTurn } from "./model-turn";
import type { StreamTransform } from "./stream/transforms";
import { createMemoryLedger, type ToolLedger } from "./tool-ledger";
import { runToolCall, type ToolCallOutcome } from "./tools/lifecycle";
import type { ApprovalGate } from "./tools/approval-gate";
import type { ToolContext, ToolDefinition } from "./tools/types";
import { unmeteredUsage, type UsageMeter } from "./usage-meter";

/** Where an attempt reports what happens while it runs (events to clients). */
export interface AttemptSink {
  assistantDelta(delta: string): void;
  thinkingDelta(delta: string): void;
  toolStart(call: ToolCallBlock): void;
  /** Partial output of a running tool. */
  toolUpdate?(call: ToolCallBlock, partialResult: string): void;
  toolResult(call: ToolCallBlock, result: ToolResultMessage): void;
}

export interface AttemptParams {
  provider: ModelProvider;
  model: string;
  system: string;
  /**
   * What the model sees: the committed transcript after the history chain
   * (an attempt always starts from the latest stable state), prompt included.
   */
  history: Message[];
  tools: ReadonlyMap<string, ToolDefinition>;
  /** Why a called tool is not offered, when known (an MCP server that is down for this attempt). */
  missingToolReason?(name: string): string | undefined;
  /**
   * Persists one complete turn (validated against the transcript invariants).
   * `behind`: the loop goes on while this write is in flight (a tool turn,
   * written while the next model call runs) and waits for it before its next
   * durable step; whatever the turn streamed counts as committed from now on.
   */
  commitTurn(turn: Message[], options?: { behind?: boolean }): Promise<void>;
  sink: AttemptSink;
  toolContext: ToolContext;
  hooks?: HookRegistry;
  /** Mutating tool calls of the run; default: in memory (no crash safety). */
  ledger?: ToolLedger;
  /** Usage accounting and spend budgets; default: unmetered. */
  meter?: UsageMeter;
  /** Enables the in-loop context guard. */
  contextWindowTokens?: number;
  /** What the provider counts per token we estimate (run-loop Calibration); default 1. */
  tokenScale?: number;
  idleTimeoutMs?: number;
  maxOutputTokens?: number;
  thinking?: ThinkingLevel;
  maxToolRounds: number;
  /** Cap for one tool result, applied before it is stored or emitted. */
  maxToolResultChars: number;
  /** Per-call time limit (default 120 s). */
  toolTimeoutMs?: number;
  streamTransforms?: readonly StreamTransform[];
  /** True when the attempt should stop at the next boundary (Lambda deadline near). */
  shouldYield(): boolean;
  now?(): number;
  /** Queue mode steer: messages that arrived for this session while it runs (shared/lanes/steering.ts). */
  steering?: AttemptSteering;
  /** Approvals: a call that needs one pauses the attempt before it runs (docs/approvals.md). */
  gate?: ApprovalGate;
}

/**
 * The seam for steering. `drain` commits the waiting messages to the
 * transcript itself (under the attempt's writer claim) and returns the ones it
 * committed, for the loop to append before the next model call; `pending`
 * says whether one waits, so an unstarted tool call is skipped for it.
 */
export interface AttemptSteering {
  pending(): Promise<boolean>;
  /** `beforeCommit` is waited for before the first message is committed (the turn still being written). */
  drain(beforeCommit?: () => Promise<void>): Promise<UserMessage[]>;
  /**
   * Starts the read the next `drain()` begins with, beside a turn's commit
   * (the read depends on nothing the commit writes): a message that arrives
   * after it waits for the next boundary, as one arriving right after the
   * drain's own read would.
   */
  prefetch?(): void;
}

/** The result of a tool call skipped because a steering message arrived first (OpenClaw: "Skipped due to queued user message."). */
export const SKIPPED_FOR_STEERING = "Skipped: a newer user message arrived before this tool call started.";

/** The structured result (versioned: core/attempt-result). */
export type AttemptReport = AttemptResult;

const DEFAULT_TOOL_TIMEOUT_MS = 120_000;

/**
 * The model <-> tool loop of one attempt: call the model, run the tools it
 * asked for, commit each complete turn, repeat until a terminal answer. All
 * variable parts are injected, so it runs the same with a scripted model in a
 * test and with a real provider in the attempt Lambda. Between any two steps
 * it checks, in this order: abort, Lambda deadline, spend budget, context guard.
 */
export async function runAttempt(params: AttemptParams): Promise<AttemptReport> {
  const run = new AttemptRun(params);
  let outcome: AttemptOutcome;
  try {
    outcome = await run.loop();
  } catch (error) {
    // A tool turn's commit that failed behind the model call failed first: the loop only went on because it
    // did not wait for it. Otherwise the attempt's own failure is the one that counts; a counter write that
    // failed beside it goes with it.
    const writeFailure = await run.settleWrites().then(() => undefined, (failure: unknown) => ({ failure }));
    await run.settleUsage().catch(() => undefined);
    throw writeFailure ? writeFailure.failure : error;
  }
  // A tool turn still being written is durable before the attempt reports (its failure fails the attempt).
  await run.settleWrites();
  // Every call's spend counters are durable before the attempt reports (a failed write fails the attempt, as before).
  await run.settleUsage();
  return run.recorder.build(outcome);
}

class AttemptRun {
  readonly recorder = new AttemptRecorder();
  private readonly messages: Message[];
  private readonly ledger: ToolLedger;
  private readonly meter: UsageMeter;
  private readonly hooks: HookRegistry;
  /** before_agent_finalize revisions so far (capped). */
  private revisions = 0;
  /** The last tool turn's commit while it is written behind the next model call (settleWrites). */
  private behind: Promise<void> = Promise.resolve();

  constructor(private readonly params: AttemptParams) {
    this.messages = [...params.history];
    this.ledger = params.ledger ?? createMemoryLedger(params.now);
    this.meter = params.meter ?? unmeteredUsage();
    this.hooks = params.hooks ?? EMPTY_HOOKS;
  }

  async loop(): Promise<AttemptOutcome> {
    const resumed = await this.resumePendingTurn();
    if (resumed) return resumed;
    for (let round = 0; round < this.params.maxToolRounds; round += 1) {
      const stop = this.boundaryCheck();
      if (stop) return stop;
      // The last call's spend counters are durable before the next call spends more.
      await this.meter.settle();
      // Steering messages (already committed by the port, after the last turn's) join the context right before the model call.
      this.messages.push(...((await this.params.steering?.drain(() => this.settleWrites())) ?? []));
      const turn = await streamModelTurn(this.turnRequest(), this.params.sink);
      if (!turn.ok) {
        this.recorder.modelCall(turn.partial.usage, true, this.meter.record(turn.partial.usage, true));
        return turn.failure.kind === "aborted" ? { kind: "aborted" } : this.failed(turn.failure);
      }
      const calls = toolCallsOf(turn.message);
      if (calls.length === 0) {
        const outcome = await this.finish(turn.message);
        if (outcome.kind === "completed" && (await this.revise(turn.message))) continue;
        return outcome;
      }
      this.recorder.modelCall(turn.message.usage, false, this.meter.record(turn.message.usage, false));
      this.recorder.modelTurn(turn.message);
      const paused = await this.runToolTurn(turn.message, calls);
      if (paused) return paused;
    }
    // Out of rounds for this attempt: everything is committed; the outer loop continues in a fresh attempt.
    return { kind: "yielded" };
  }

  /**
   * Waits for the tool turn written behind the model call that followed it.
   * Every durable step after a tool turn (a tool's run, the ledger, a
   * steering message's commit, the next commit, the report) comes after
   * this, so the transcript and the ledger see the same order of writes as
   * if each commit had been awaited; only the model call and the launch
   * checkpoint's read, which write nothing the turn's commit could conflict
   * with, overlap it.
   */
  async settleWrites(): Promise<void> {
    await this.behind;
  }

  /** Waits for the spend counters of every call this attempt recorded. */
  async settleUsage(): Promise<void> {
    await this.meter.settle();
  }

  /** Abort, deadline, budget, context: the checks at every model/tool boundary. */
  private boundaryCheck(): AttemptOutcome | undefined {
    if (this.params.toolContext.signal.aborted) return { kind: "aborted" };
    if (this.params.shouldYield()) return { kind: "yielded" };
    const budget = this.meter.breach();
    if (budget) return { kind: "budget_exceeded", ...budget };
    if (this.params.contextWindowTokens !== undefined) {
      const guard = checkContextGuard(this.params.system, this.messages, this.params.contextWindowTokens, this.params.tokenScale);
      if (!guard.ok) return this.failed({ kind: "context_overflow", message: guard.message, retryable: false, responseStarted: false });
    }
    return undefined;
  }

  private turnRequest() {
    const p = this.params;
    return {
      provider: p.provider,
      model: p.model,
      system: p.system,
      messages: this.messages,
      tools: p.tools,
      signal: p.toolContext.signal,
      idleTimeoutMs: p.idleTimeoutMs,
      maxOutputTokens: p.maxOutputTokens,
      thinking: p.thinking,
      transforms: p.streamTransforms,
    };
  }

  private failed(failure: Extract<AttemptOutcome, { kind: "failed" }>["failure"]): AttemptOutcome {
    const estimated = estimateTokens(contextChars(this.params.system, this.messages));
    return {
      kind: "failed",
      failure,
      completedModelProgress: this.recorder.modelTurns > 0,
      // The provider's count when a call reported one, else the same estimate the precheck uses.
      promptTokens: this.recorder.lastPromptTokens ?? Math.round(estimated * (this.params.tokenScale ?? 1)),
      estimatedPromptTokens: estimated,
      ...(this.params.contextWindowTokens !== undefined ? { contextTokens: this.params.contextWindowTokens } : {}),
    };
  }

  private async finish(message: AssistantMessage): Promise<AttemptOutcome> {
    if (assistantText(message).trim() === "") {
      this.recorder.modelCall(message.usage, true, this.meter.record(message.usage, true));
      const reasoned = message.content.some((block) => block.type === "thinking" && block.text.trim() !== "");
      // No content at all is a missing assistant message; empty text is an empty response.
      const kind = reasoned ? "reasoning_only" : message.content.length === 0 ? "missing_assistant" : "empty_response";
      return { kind, hadSideEffects: this.recorder.hadSideEffects };
    }
    this.recorder.modelCall(message.usage, false, this.meter.record(message.usage, false));
    this.recorder.modelTurn(message);
    await this.settleWrites();
    await this.params.commitTurn([message]);
    this.messages.push(message);
    this.recorder.answer(message);
    return { kind: "completed" };
  }

  /** before_agent_finalize asked for a revision: its prompt is committed and the loop calls the model again. */
  private async revise(answer: AssistantMessage): Promise<boolean> {
    const ref = { runId: this.params.toolContext.runId, sessionKey: this.params.toolContext.sessionKey };
    const prompt = await finalizeRevision(this.hooks, ref, answer, this.messages, this.revisions);
    if (!prompt) return false;
    this.revisions += 1;
    await this.settleWrites();
    await this.params.commitTurn([prompt]);
    this.messages.push(prompt);
    return true;
  }

  /**
   * Runs the calls of one assistant turn and commits the turn with all its
   * results. A turn with a mutating call is saved in the ledger first, so a
   * crash before the commit is resumed, not re-asked (resumePendingTurn).
   * A call that must wait for outside input (an approval) pauses the attempt
   * before it runs: the turn is saved the same way and is finished by the
   * attempt after the answer; nothing of it is committed yet.
   */
  private async runToolTurn(message: AssistantMessage, calls: ToolCallBlock[], fromLedger = false): Promise<Extract<AttemptOutcome, { kind: "paused" }> | undefined> {
    const mutating = calls.some((call) => this.params.tools.get(call.name.trim())?.mutating);
    if (mutating && !fromLedger) {
      await this.settleWrites();
      await this.ledger.savePendingTurn(message);
    }
    const results: ToolResultMessage[] = [];
    const ranHere: ToolCallOutcome[] = [];
    let steered = false;
    let paused: { inputId: string; timeoutSeconds: number } | undefined;
    for (const call of calls) {
      // Paused for a client tool: the client calls right after it are handed out in the same pause
      // (their pending inputs are created now); anything else waits for the attempt after the answers.
      if (paused && !this.isClientTool(call)) break;
      // A steering message waits: calls not started yet are skipped (a running one finishes).
      steered ||= (await this.params.steering?.pending()) ?? false;
      if (steered) {
        results.push(this.skipTool(call));
        continue;
      }
      // The tool (its hooks, the approval gate, the ledger) runs after the last turn is durable.
      await this.settleWrites();
      const outcome = await this.runTool(call, fromLedger);
      if (outcome.paused) {
        paused = paused ? { ...paused, timeoutSeconds: Math.max(paused.timeoutSeconds, outcome.paused.timeoutSeconds) } : outcome.paused;
        if (!this.isClientTool(call)) break;
        continue;
      }
      if (outcome.executed && !outcome.meta.mutating) ranHere.push(outcome);
      results.push(outcome.result);
    }
    // Before the pause's ledger writes and before this turn's own commit (every call skipped: nothing waited yet).
    await this.settleWrites();
    if (paused) {
      if (!mutating && !fromLedger) await this.ledger.savePendingTurn(message);
      await this.recordBeforePause(ranHere);
      return { kind: "paused", ...paused };
    }
    this.params.steering?.prefetch?.();
    // Written behind the next model call, which needs nothing from it but the messages (settleWrites).
    const commit = this.params.commitTurn([message, ...results], { behind: true });
    this.behind = mutating || fromLedger ? commit.then(() => this.ledger.clearPendingTurn()) : commit;
    // Not unhandled while nothing waits for it yet: the next settleWrites throws its failure.
    this.behind.catch(() => undefined);
    this.messages.push(message, ...results);
    return undefined;
  }

  /**
   * The turn pauses after these calls ran: their results go into the ledger
   * (only mutating calls are recorded otherwise), so the attempt that finishes
   * the turn replays them instead of running them again.
   */
  private async recordBeforePause(ran: readonly ToolCallOutcome[]): Promise<void> {
    for (const outcome of ran) {
      if (await this.ledger.markStarted(outcome.meta.toolCallId, outcome.meta.name)) {
        await this.ledger.markCompleted(outcome.meta.toolCallId, { content: outcome.result.content, isError: outcome.result.isError });
      }
    }
  }

  private isClientTool(call: ToolCallBlock): boolean {
    return this.params.tools.get(call.name.trim())?.client === true;
  }

  private skipTool(call: ToolCallBlock): ToolResultMessage {
    const result: ToolResultMessage = { role: "tool_result", toolCallId: call.id, toolName: call.name, content: SKIPPED_FOR_STEERING, isError: true };
    this.params.sink.toolStart(call);
    this.params.sink.toolResult(call, result);
    return result;
  }

  /** `resuming`: the turn comes from the ledger, where calls that ran before a pause are recorded. */
  private async runTool(call: ToolCallBlock, resuming = false): Promise<ToolCallOutcome> {
    const { sink, toolContext } = this.params;
    // A client tool's start event goes out when the run has paused for it (the client answers that event).
    if (!this.isClientTool(call)) sink.toolStart(call);
    const outcome = await runToolCall(call, {
      tools: this.params.tools,
      hooks: this.hooks,
      ledger: this.ledger,
      context: { ...toolContext, onUpdate: sink.toolUpdate ? (partial) => sink.toolUpdate?.(call, partial) : undefined },
      maxResultChars: this.params.maxToolResultChars,
      timeoutMs: this.params.toolTimeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS,
      now: this.params.now ?? Date.now,
      missingToolReason: this.params.missingToolReason,
      gate: this.params.gate,
      replayRecorded: resuming,
    });
    if (outcome.paused) return outcome;
    this.recorder.tool(outcome);
    sink.toolResult(call, outcome.result);
    return outcome;
  }

  /**
   * An earlier attempt of this run saved a tool turn and died before it was
   * committed. Finish that turn from the ledger (completed calls are replayed,
   * interrupted ones reported as uncertain, unstarted ones run) instead of
   * asking the model again and re-running its side effects.
   */
  private async resumePendingTurn(): Promise<Extract<AttemptOutcome, { kind: "paused" }> | undefined> {
    const pending = await this.ledger.loadPendingTurn();
    if (!pending) return undefined;
    const calls = toolCallsOf(pending.message);
    const committed = this.messages.some((m) => m.role === "assistant" && toolCallsOf(m).some((c) => calls.some((p) => p.id === c.id)));
    const last = this.messages[this.messages.length - 1];
    if (committed || calls.length === 0 || last?.role === "assistant") {
      await this.ledger.clearPendingTurn();
      return undefined;
    }
    // Not counted as a model turn: the model's work happened in the attempt that died (or paused).
    return this.runToolTurn(pending.message, calls, true);
  }
}
