/**
 * The plugin shape, as OpenClaw has it: a module whose default export is
 * `{ id, register(api) }`. Types exported for plugin authors
 * (`import type { AgentRunnerPlugin } from "serverless-agent-runner/plugins"`).
 */
import type { HookHandler, HookName } from "../hooks/types";
import type { ToolContext, ToolOutput } from "../agent/tools/types";
import type { Log } from "../run/deps";

/** Structured logger (Powertools' JSON lines in Lambda), scoped to the plugin. */
export type PluginLogger = Log;

export interface PluginTool {
  name: string;
  description: string;
  /** JSON Schema of the arguments (validated before every call). */
  parameters?: Record<string, unknown>;
  /** Side effects: the call goes through the tool-call ledger and is never blindly re-run. */
  mutating?: boolean;
  execute(args: Record<string, unknown>, context: ToolContext): Promise<ToolOutput | string> | ToolOutput | string;
}

export interface PluginApi {
  /** This plugin's `config` block from the agent configuration (`{}` when none). */
  readonly config: Readonly<Record<string, unknown>>;
  readonly logger: PluginLogger;
  on<N extends HookName>(hookName: N, handler: HookHandler<N>, options?: { priority?: number; timeoutMs?: number }): void;
  registerTool(tool: PluginTool): void;
}

export interface AgentRunnerPlugin {
  id: string;
  register(api: PluginApi): void;
}
