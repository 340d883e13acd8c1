import type { AttemptParams, AttemptSink } from "../agent/attempt";
import type { AttemptSessionInput } from "../agent/attempt-session";
import { createDirWorkspaceSource, EMPTY_WORKSPACE, emptyWorkspaceSource, type Workspace, type WorkspaceSource } from "../agent/prompt/workspace";
import { buildToolSurface } from "../agent/tools/registry";
import { loadMcpTools, mcpMissingToolReason } from "../agent/tools/mcp/tools";
import { createUsageMeter } from "../agent/usage-meter";
import type { RunRecord } from "../aws/runs";
import { createDynamoToolLedger } from "../aws/tool-ledger";
import { readSpend, recordSpend } from "../aws/usage";
import { nothingSpentYet } from "./invocation-memo";
import { createTableWorkspaceSource } from "../aws/workspace";
import type { AgentConfig } from "../config/config";
import { resolveIdleTimeoutMs } from "../core/idle-timeout";
import type { Message } from "../core/messages";
import type { Continuation, ThinkingLevel } from "../core/run-loop";
import { hooksFromConfig } from "../hooks/from-config";
import type { ModelProvider } from "../providers/types";
import type { Db } from "../aws/dynamo";
import type { RunDeps } from "./deps";
import { createApprovalGate } from "./approval-gate";
import { channelToolsFor } from "../channels/message-tool";
import { clientToolDefinitions, withClientTools } from "./client-tool-gate";

/**
 * The AWS side of one attempt: where its ports come from. The workspace from
 * a directory or the table, the tool-call ledger and the spend counters in
 * DynamoDB, hooks from configuration plus those registered in code, the idle
 * window from the run's remaining budget. Everything else is in
 * shared/agent/attempt-session.ts and does not know about AWS.
 */
export interface AttemptWiringInput {
  run: RunRecord;
  /** Configuration with the chosen auth profile in place. */
  config: AgentConfig;
  provider: ModelProvider;
  model: string;
  /** `provider/model`. */
  ref: string;
  continuation?: Continuation;
  thinking?: ThinkingLevel;
  transcript: readonly Message[];
  sink: AttemptSink;
  signal: AbortSignal;
  commitTurn: AttemptParams["commitTurn"];
  shouldYield(): boolean;
}

export async function wireAttemptSession(deps: RunDeps, input: AttemptWiringInput): Promise<AttemptSessionInput> {
  const { run, config } = input;
  const source = workspaceSource(deps.db, config);
  const hooks = hooksFromConfig(config.hooks, ({ hook, id, error }) => deps.log.warn("hook failed", { hook, id, error: String(error) })).combinedWith(deps.hooks);
  // The run's first attempt right after its start in this invocation: its counter is still zero (no read).
  const runCounter = limits(config.budgets.run) && !nothingSpentYet(deps, run.runId);
  // Three independent loads at once. MCP servers are listed per attempt (cached in the warm function);
  // one that is down only takes its own tools away.
  const [workspace, spentBefore, mcp] = await Promise.all([
    loadWorkspace(deps, source),
    readSpend(deps.db, run.runId, run.sessionKey, { run: runCounter, session: limits(config.budgets.session) }),
    loadMcpTools(config.mcp, { signal: input.signal }),
  ]);
  if (mcp.unavailable.size > 0) deps.log.warn("MCP servers unavailable for this attempt", { runId: run.runId, servers: Object.fromEntries(mcp.unavailable) });
  return {
    provider: input.provider,
    model: input.model,
    modelRef: input.ref,
    transcript: input.transcript,
    workspace,
    prompt: {
      basePrompt: config.agent.systemPrompt,
      ...(run.extraSystemPrompt ? { extraSystemPrompt: run.extraSystemPrompt } : {}),
      ...(input.continuation ? { continuation: input.continuation } : {}),
      bootstrapMaxChars: config.workspace.bootstrapMaxChars,
      bootstrapTotalMaxChars: config.workspace.bootstrapTotalMaxChars,
      maxSkillsPromptChars: config.workspace.maxSkillsPromptChars,
      mode: config.prompt.mode,
      userTimezone: config.prompt.userTimezone,
      agentId: config.prompt.agentId,
      // The acceptance time, not "now": every attempt of the run sends the same prompt (warm prompt caches).
      runStartedAt: run.acceptedAt,
      channel: run.source,
      firstRun: isFirstRun(run, input.transcript),
      workspaceLabel: WORKSPACE_LABELS[source.kind] ?? "the deployment's workspace",
    },
    onWarning: (message, extra) => deps.log.warn(message, { runId: run.runId, ...extra }),
    context: config.context,
    maxToolResultChars: config.agent.maxToolResultChars,
    tools: buildToolSurface({
      config: config.tools,
      skills: workspace.skills,
      now: deps.db.now,
      // A Telegram / Slack run also gets the messaging tool (`message`, shared/channels/message-tool.ts).
      extra: [
        ...clientToolDefinitions(run),
        ...(deps.pluginTools ?? []),
        ...mcp.tools,
        ...channelToolsFor({ db: deps.db, log: deps.log, channels: config.channels, hooks }, run),
      ],
    }),
    missingToolReason: mcpMissingToolReason(mcp),
    unavailableToolServers: mcp.unavailable,
    hooks,
    // A run whose record shows no saved tool turn has none to resume: no read of it.
    ledger: createDynamoToolLedger(deps.db, run.runId, { retentionDays: config.events.retentionDays, runMarked: run.pendingTurnAt !== undefined }),
    meter: createUsageMeter({
      pricing: config.pricing[input.ref],
      budgets: config.budgets,
      spentBefore,
      // Best effort: a lost counter update only loosens a budget; crashing would waste the model call it counts.
      persist: (usage, spend, wasted) =>
        recordSpend(deps.db, { runId: run.runId, sessionKey: run.sessionKey }, usage, spend, wasted).catch((error: unknown) =>
          deps.log.warn("spend counters not updated", { runId: run.runId, error: String(error) }),
        ),
    }),
    commitTurn: input.commitTurn,
    sink: input.sink,
    toolContext: { runId: run.runId, sessionKey: run.sessionKey, signal: input.signal },
    idleTimeoutMs: idleTimeoutFor(deps, config, input.ref, run),
    maxOutputTokens: config.agent.maxOutputTokens,
    ...(input.thinking ? { thinking: input.thinking } : {}),
    maxToolRounds: config.agent.maxToolRounds,
    toolTimeoutMs: config.tools.timeoutSeconds * 1000,
    shouldYield: input.shouldYield,
    now: deps.db.now,
    gate: withClientTools(deps.db, run, createApprovalGate(deps.db, run, config.tools.requireApproval)),
  };
}

/** A broken workspace must not stop every run: the prompt goes without it and the log says why. */
async function loadWorkspace(deps: RunDeps, source: WorkspaceSource): Promise<Workspace> {
  try {
    return await source.load();
  } catch (error) {
    deps.log.warn("workspace not loaded; continuing without bootstrap files and skills", { source: source.kind, error: String(error) });
    return EMPTY_WORKSPACE;
  }
}

const WORKSPACE_LABELS: Record<string, string> = {
  dir: "the agent's workspace folder (deployed with the code)",
  table: "the deployment's workspace item in its table",
  none: "empty (no workspace is configured)",
};

/**
 * A session's first run: its own message is the session's first message
 * entry (seq 1, after the session_start note that is appended with it, see
 * shared/run/session-boundary.ts sessionStartEntries). Records written
 * before `userEntrySeq` existed: no earlier answer in the history.
 */
export function isFirstRun(run: RunRecord, transcript: readonly Message[]): boolean {
  if (run.userEntrySeq !== undefined) return run.userEntrySeq <= 1;
  return !transcript.some((message) => message.role === "assistant");
}

/** `auto`: the configured directory if there is one, else the workspace item in the table. */
export function workspaceSource(db: Db, config: AgentConfig): WorkspaceSource {
  const { source, dir } = config.workspace;
  if (source === "none") return emptyWorkspaceSource;
  if (source === "dir" || (source === "auto" && dir)) return dir ? createDirWorkspaceSource(dir) : emptyWorkspaceSource;
  return createTableWorkspaceSource(db);
}

/** The idle window: configured, extended by the provider's timeoutSeconds, never past the run's remaining budget. */
export function idleTimeoutFor(deps: RunDeps, config: AgentConfig, ref: string, run: RunRecord): number | undefined {
  const providerId = ref.slice(0, ref.indexOf("/")) as keyof AgentConfig["providers"];
  const unlimited = run.timeoutMs === 0 || run.startedAt === undefined;
  return resolveIdleTimeoutMs({
    idleTimeoutSeconds: config.agent.idleTimeoutSeconds,
    providerTimeoutSeconds: config.providers[providerId]?.timeoutSeconds,
    runRemainingMs: unlimited ? undefined : run.startedAt! + run.timeoutMs - deps.db.now(),
  });
}

/** A budget with no limit set never stops anything: its counter need not be read. */
function limits(budget: { maxTokens?: number; maxCostUsd?: number } | undefined): boolean {
  return budget?.maxTokens !== undefined || budget?.maxCostUsd !== undefined;
}
