import type { ContextConfig } from "../config/attempt-config";
import type { AttemptResult } from "../core/attempt-result";
import { checkContextWindow } from "../core/context-window-guard";
import { precheckContext, resolveToolResultMaxChars, type PrecheckResult } from "../core/context-budget";
import { ZERO_USAGE, type AssistantMessage, type Message } from "../core/messages";
import type { AttemptOutcome, Calibration, Continuation } from "../core/run-loop";
import type { HookRegistry } from "../hooks/registry";
import { runBeforePromptBuild, runFirstAnswer } from "../hooks/runners";
import { runAttempt, type AttemptParams } from "./attempt";
import { AttemptRecorder } from "./attempt-recorder";
import { passthroughContextEngine, type ContextEngine } from "./history/context-engine";
import { prepareHistory, type PreparedHistory } from "./history/pipeline";
import type { PromptMode } from "../config/prompt-config";
import { buildBootstrapContext, selectBootstrapFiles } from "./prompt/bootstrap";
import { buildSkillsPrompt } from "./prompt/skills";
import type { Workspace } from "./prompt/workspace";
import { applyPromptMutations, buildSystemPrompt, type SystemPromptParts } from "./system-prompt";
import { narrowTools } from "./tools/registry";
import type { ToolDefinition } from "./tools/types";

export interface PromptSettings {
  basePrompt: string;
  /** Per-run override accepted at intake. */
  extraSystemPrompt?: string;
  continuation?: Continuation;
  bootstrapMaxChars: number;
  bootstrapTotalMaxChars: number;
  maxSkillsPromptChars: number;
  /** `full` (default) / `minimal` / `none` (shared/config/prompt-config.ts). */
  mode?: PromptMode;
  /** IANA zone of the date and time in the prompt (default UTC). */
  userTimezone?: string;
  agentId?: string;
  /** When the run was accepted: the prompt's date and time (default: now). */
  runStartedAt?: number;
  /** Where the message came from (the Runtime line). */
  channel?: string;
  /** The session's first run: BOOTSTRAP.md is included. */
  firstRun?: boolean;
  /** Where the workspace comes from, in words, for the Workspace section. */
  workspaceLabel?: string;
}

/** Everything runAttempt needs except what preparation derives (system, history, tools, caps). */
export type LoopPorts = Omit<AttemptParams, "system" | "history" | "tools" | "maxToolResultChars" | "contextWindowTokens" | "tokenScale" | "hooks">;

export interface AttemptSessionInput extends LoopPorts {
  /** `provider/model`, for per-model windows. */
  modelRef: string;
  /** The committed transcript, read at the start of this attempt. */
  transcript: readonly Message[];
  workspace: Workspace;
  prompt: PromptSettings;
  context: ContextConfig;
  /** Configured hard cap for one tool result (unset = by window size). */
  maxToolResultChars?: number;
  /** The tool surface before hooks narrow it. */
  tools: ReadonlyMap<string, ToolDefinition>;
  /** MCP servers down for this attempt (name -> why): the prompt's Tooling section says so. */
  unavailableToolServers?: ReadonlyMap<string, string>;
  hooks: HookRegistry;
  engine?: ContextEngine;
  /** What an earlier overflow of this model taught the run (core/overflow.ts). */
  calibration?: Calibration;
  /** The loop's role-ordering repair: send the history in strict alternation. */
  strictTurns?: boolean;
  /** Told about conditions that do not stop the attempt (a small context window). */
  onWarning?(message: string, extra: Record<string, unknown>): void;
}

export interface PreparedAttempt {
  system: string;
  history: PreparedHistory;
  messages: Message[];
  tools: Map<string, ToolDefinition>;
  contextWindowTokens: number;
  toolResultMaxChars: number;
  precheck: PrecheckResult;
}

/**
 * One attempt, start to end (seed 002 layers 8-12, seed 003): prepare an
 * executable session (tools, system prompt with skills, bootstrap files and
 * overrides, then hooks), run the history chain, check the budgets and the
 * context precheck, let a plugin take the turn, then the model <-> tool loop,
 * (agent_end fires once per run, in FinalizeRun). Returns the structured result; early exits
 * (budget, precheck) carry no model call at all.
 */
export async function runAttemptSession(input: AttemptSessionInput): Promise<AttemptResult> {
  const prepared = await prepareAttempt(input);
  const early = earlyOutcome(input, prepared);
  const ran = early
    ? new AttemptRecorder().build(early)
    : ((await syntheticReply(input, prepared)) ??
      (await runAttempt({
        ...input,
        system: prepared.system,
        history: prepared.messages,
        tools: prepared.tools,
        hooks: input.hooks,
        maxToolResultChars: prepared.toolResultMaxChars,
        contextWindowTokens: prepared.contextWindowTokens,
        tokenScale: input.calibration?.tokenScale,
      })));
  // Whatever the outcome, the decision after it sizes with the prompt that was sent (timeout compaction).
  return { ...ran, systemPromptChars: prepared.system.length };
}

export async function prepareAttempt(input: AttemptSessionInput): Promise<PreparedAttempt> {
  const contextWindowTokens = Math.min(
    input.context.contextTokens,
    input.context.modelContextWindows[input.modelRef] ?? Infinity,
    input.calibration?.contextTokens ?? Infinity,
  );
  const toolResultMaxChars = resolveToolResultMaxChars(contextWindowTokens, input.maxToolResultChars);
  const history = await prepareHistory(input.transcript, {
    api: input.provider.api,
    historyTurnLimit: input.context.historyTurnLimit,
    engine: input.engine ?? passthroughContextEngine,
    tokenBudget: contextWindowTokens,
    availableTools: [...input.tools.keys()],
    strictTurns: input.strictTurns === true,
  });
  const promptFor = (tools: ReadonlyMap<string, ToolDefinition>) => buildSystemPrompt(systemPromptParts(input, tools));
  const offered = promptFor(input.tools);
  const hook = await runBeforePromptBuild(input.hooks, { ...runRef(input), prompt: lastUserText(history.messages), messages: history.messages, systemPrompt: offered });
  const tools = narrowTools(input.tools, hook.toolsAllow);
  // The Tooling section lists the tools actually offered: rebuilt when a hook narrowed them.
  const built = hook.toolsAllow ? promptFor(tools) : offered;
  const system = applyPromptMutations(built, { engineAddition: history.systemPromptAddition, hook });
  const messages = hook.prependContext ? prependToPrompt(history.messages, hook.prependContext) : history.messages;
  const precheck = precheckContext({
    system,
    messages,
    contextTokenBudget: contextWindowTokens,
    reserveTokens: input.context.reserveTokens,
    toolResultMaxChars,
    tokenScale: input.calibration?.tokenScale,
  });
  return { system, history, messages, tools, contextWindowTokens, toolResultMaxChars, precheck };
}

/** What the prompt is built from: settings, workspace, the tools on offer and the model that runs. */
function systemPromptParts(input: AttemptSessionInput, tools: ReadonlyMap<string, ToolDefinition>): SystemPromptParts {
  const { prompt } = input;
  const mode = prompt.mode ?? "full";
  const skills = buildSkillsPrompt(input.workspace.skills, prompt.maxSkillsPromptChars).text;
  const files = selectBootstrapFiles(input.workspace.files, { mode, firstRun: prompt.firstRun ?? false });
  const projectContext = buildBootstrapContext(files, { perFileMaxChars: prompt.bootstrapMaxChars, totalMaxChars: prompt.bootstrapTotalMaxChars }).text;
  return {
    mode,
    identity: prompt.basePrompt,
    tools: [...tools.values()].map((tool) => ({ name: tool.name, description: tool.description })),
    unavailableToolServers: input.unavailableToolServers,
    skillsBlock: skills,
    workspace: prompt.workspaceLabel ?? "the deployment's workspace",
    runStartedAt: prompt.runStartedAt ?? (input.now ?? Date.now)(),
    timezone: prompt.userTimezone ?? "UTC",
    projectContext,
    extra: prompt.extraSystemPrompt,
    runtime: { agentId: prompt.agentId ?? "main", model: input.modelRef, channel: prompt.channel, thinking: input.thinking },
    continuation: prompt.continuation,
  };
}

/** A model whose window is too small, a spent budget or a prompt that cannot fit ends the attempt before any model call. */
function earlyOutcome(input: AttemptSessionInput, prepared: PreparedAttempt): AttemptOutcome | undefined {
  const window = checkContextWindow(prepared.contextWindowTokens);
  if (!window.ok) {
    const failure = { kind: "model_not_found" as const, message: window.message, userMessage: window.message, retryable: false, responseStarted: false };
    return { kind: "failed", failure, completedModelProgress: false };
  }
  if (window.warning) input.onWarning?.(window.warning, { model: input.modelRef, contextTokens: prepared.contextWindowTokens });
  const budget = input.meter?.breach();
  if (budget) return { kind: "budget_exceeded", ...budget };
  const { route, estimatedTokens, promptBudgetTokens, overflowTokens } = prepared.precheck;
  if (route === "fits") return undefined;
  return { kind: "context_precheck", route, estimatedTokens, promptBudgetTokens, overflowTokens, toolResultMaxChars: prepared.toolResultMaxChars };
}

/** before_agent_reply: a plugin may answer instead of the model (the reply is committed like a model answer). */
async function syntheticReply(input: AttemptSessionInput, prepared: PreparedAttempt): Promise<AttemptResult | undefined> {
  const answer = await runFirstAnswer(input.hooks, "before_agent_reply", { ...runRef(input), prompt: lastUserText(prepared.messages) }, (r) => r.handled === true);
  if (!answer) return undefined;
  const text = answer.reply ?? "NO_REPLY";
  const message: AssistantMessage = { role: "assistant", content: [{ type: "text", text }], provider: "hook", model: "before_agent_reply", stopReason: "stop", usage: ZERO_USAGE };
  await input.commitTurn([message]);
  const recorder = new AttemptRecorder();
  recorder.modelTurn(message);
  recorder.answer(message);
  return recorder.build({ kind: "completed" });
}

function runRef(input: AttemptSessionInput) {
  return { runId: input.toolContext.runId, sessionKey: input.toolContext.sessionKey };
}

function lastUserText(messages: readonly Message[]): string {
  for (let i = messages.length - 1; i >= 0; i -= 1) {
    const message = messages[i];
    if (message.role === "user") return message.content;
  }
  return "";
}

/** before_prompt_build's prependContext goes in front of the user's prompt for this attempt only. */
function prependToPrompt(messages: readonly Message[], context: string): Message[] {
  const out = [...messages];
  for (let i = out.length - 1; i >= 0; i -= 1) {
    const message = out[i];
    if (message.role === "user") {
      out[i] = { role: "user", content: `${context}\n\n${message.content}` };
      break;
    }
  }
  return out;
}
