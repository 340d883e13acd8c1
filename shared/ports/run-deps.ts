/**
 * The ports every run-step service takes (storage, fan-out, executions,
 * configuration, log, hooks), in a module of their own so that `run`,
 * `lanes`, `events` and `sweeper` can all depend on them without depending
 * on each other.
 */
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
  /** Correlation keys for every later line of this invocation (Powertools `appendKeys`); optional for test logs. */
  appendKeys?(keys: Record<string, string | number>): void;
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
  /** Version of `config` (the deployed configuration's content hash); absent outside a deployment. */
  configVersion?: string;
  /** The deployed configuration of an earlier version (its snapshot in the table), for runs accepted under it. */
  configFor?(version: string): Promise<AgentConfig>;
  /** Tools registered by plugins (offered next to the built-in and custom ones). */
  pluginTools?: readonly ToolDefinition[];
  /**
   * What one invocation opened once and reuses (the run's event emitter, shared by the
   * run-start prelude, the attempt and the inline finalize: shared/run/invocation-memo.ts).
   * Set per invocation by the Attempt task, never on the cold-start deps: nothing here
   * outlives the invocation that made it.
   */
  memo?: Map<string, unknown>;
}

export const silentLog: Log = { info() {}, warn() {}, error() {} };
