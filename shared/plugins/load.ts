import { HookRegistry, type HookErrorReport } from "../hooks/registry";
import type { HookHandler, HookName, HookSpecs } from "../hooks/types";
import type { ToolDefinition } from "../agent/tools/types";
import type { AgentRunnerPlugin, PluginApi, PluginLogger, PluginTool } from "./types";

/** Every hook a plugin may register (the keys of HookSpecs, checked at load). */
export const HOOK_NAMES: readonly HookName[] = [
  "before_model_resolve",
  "before_agent_run",
  "before_agent_finalize",
  "before_prompt_build",
  "before_agent_reply",
  "agent_end",
  "before_compaction",
  "after_compaction",
  "before_tool_call",
  "after_tool_call",
  "tool_result_persist",
  "message_received",
  "message_sending",
  "message_sent",
  "session_start",
  "session_end",
] satisfies readonly (keyof HookSpecs)[];

export class PluginError extends Error {
  override readonly name = "PluginError";
}

/** One `plugins[]` entry of the configuration, after paths are resolved. */
export interface PluginEntry {
  path: string;
  config: Record<string, unknown>;
}

export interface LoadedPlugins {
  ids: string[];
  hooks: HookRegistry;
  tools: ToolDefinition[];
}

/**
 * Registers the bundled plugin modules (in configuration order). Anything
 * wrong with a plugin (no `register`, an unknown hook, a duplicate tool)
 * throws here, at cold start / `npm start`, never in the middle of a run.
 */
export function loadPlugins(
  modules: readonly unknown[],
  entries: readonly PluginEntry[],
  logger: PluginLogger,
  onHookError?: (report: HookErrorReport) => void,
): LoadedPlugins {
  if (modules.length !== entries.length) {
    throw new PluginError(`the bundle holds ${modules.length} plugin module(s) but the configuration names ${entries.length}: synthesize again`);
  }
  const hooks = new HookRegistry(onHookError);
  const tools: ToolDefinition[] = [];
  const ids: string[] = [];
  modules.forEach((module, index) => {
    const plugin = pluginOf(module, entries[index].path);
    if (ids.includes(plugin.id)) throw new PluginError(`two plugins have the id "${plugin.id}"`);
    ids.push(plugin.id);
    plugin.register(apiFor(plugin.id, entries[index], logger, hooks, tools));
  });
  return { ids, hooks, tools };
}

function pluginOf(module: unknown, path: string): AgentRunnerPlugin {
  const candidate = (module as { default?: unknown })?.default ?? module;
  const plugin = candidate as Partial<AgentRunnerPlugin>;
  if (typeof plugin?.id !== "string" || plugin.id === "" || typeof plugin.register !== "function") {
    throw new PluginError(`plugin ${path} must export default { id: string, register(api) }`);
  }
  return plugin as AgentRunnerPlugin;
}

function apiFor(id: string, entry: PluginEntry, logger: PluginLogger, hooks: HookRegistry, tools: ToolDefinition[]): PluginApi {
  const scoped: PluginLogger = {
    info: (message, details) => logger.info(message, { plugin: id, ...details }),
    warn: (message, details) => logger.warn(message, { plugin: id, ...details }),
    error: (message, details) => logger.error(message, { plugin: id, ...details }),
  };
  return {
    config: entry.config,
    logger: scoped,
    on(hookName, handler, options = {}) {
      if (!HOOK_NAMES.includes(hookName)) {
        throw new PluginError(`plugin ${id}: unknown hook "${String(hookName)}" (known: ${HOOK_NAMES.join(", ")})`);
      }
      const bounded = options.timeoutMs ? withTimeout(hookName, handler, options.timeoutMs) : handler;
      hooks.register(hookName, bounded, { id: `plugin:${id}`, priority: options.priority ?? 0 });
    },
    registerTool(tool) {
      if (tools.some((existing) => existing.name === tool.name)) throw new PluginError(`plugin ${id}: duplicate tool name "${tool.name}"`);
      tools.push(toolDefinition(tool));
    },
  };
}

/** A hook past its time limit fails like a throwing one (reported, the run goes on). */
function withTimeout<N extends HookName>(hookName: N, handler: HookHandler<N>, timeoutMs: number): HookHandler<N> {
  if (hookName === "tool_result_persist") return handler; // synchronous by contract
  const bounded = async (event: never) => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`hook ${hookName} timed out after ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      return await Promise.race([(handler as (e: never) => unknown)(event), timeout]);
    } finally {
      clearTimeout(timer);
    }
  };
  return bounded as unknown as HookHandler<N>;
}

function toolDefinition(tool: PluginTool): ToolDefinition {
  return {
    name: tool.name,
    description: tool.description,
    parameters: tool.parameters ?? { type: "object", properties: {} },
    mutating: tool.mutating ?? false,
    async execute(args, context) {
      const output = await tool.execute(args, context);
      return typeof output === "string" ? { content: output } : output;
    },
  };
}
