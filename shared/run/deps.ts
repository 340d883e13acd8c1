import type { AgentConfig } from "../config/config";
import type { Db } from "../aws/dynamo";
import type { FramePusher } from "../aws/push";
import type { RunExecutions } from "../aws/executions";
import type { HookRegistry } from "../hooks/registry";
import type { ToolDefinition } from "../agent/tools/types";

export interface Log {
  info(message: string, extra?: Record<string, unknown>): void;
  warn(message: string, extra?: Record<string, unknown>): void;
  error(message: string, extra?: Record<string, unknown>): void;
}

/** What the run-step services need; handlers build it once per cold start. */
export interface RunDeps {
  db: Db;
  pusher: FramePusher;
  config: AgentConfig;
  executions: RunExecutions;
  log: Log;
  /** Plugin hooks (compaction and session boundaries use the observers); none when absent. */
  hooks?: HookRegistry;
  /** Tools registered by plugins (offered next to the built-in and custom ones). */
  pluginTools?: readonly ToolDefinition[];
}

export const silentLog: Log = { info() {}, warn() {}, error() {} };
