/**
 * Example plugin: a tool guard. Blocks the tools its config names before they
 * run (the model reads the reason as the tool's error result and can answer
 * the user), and can forbid arguments that match a pattern.
 *
 *   plugins: [{ "path": "./examples/plugins/tool-guard.ts",
 *               "config": { "block": ["http_*", "delete_file"],
 *                           "reason": "That tool is disabled in this deployment.",
 *                           "denyArgsMatching": "rm -rf" } }]
 *
 * Names match exactly, or by prefix with a trailing `*`. It registers with a
 * high priority so that its block is decided before other plugins rewrite
 * the call (a block is terminal: lower priorities are skipped).
 */
import type { AgentRunnerPlugin } from "../../shared/plugins/types";

interface GuardConfig {
  block: string[];
  reason?: string;
  denyArgsMatching?: string;
  priority: number;
}

function guardConfig(raw: Readonly<Record<string, unknown>>): GuardConfig {
  const block = Array.isArray(raw.block) ? raw.block.filter((name): name is string => typeof name === "string") : [];
  return {
    block,
    reason: typeof raw.reason === "string" ? raw.reason : undefined,
    denyArgsMatching: typeof raw.denyArgsMatching === "string" ? raw.denyArgsMatching : undefined,
    priority: typeof raw.priority === "number" ? raw.priority : 100,
  };
}

const matches = (patterns: readonly string[], name: string) =>
  patterns.some((pattern) => (pattern.endsWith("*") ? name.startsWith(pattern.slice(0, -1)) : name === pattern));

const plugin: AgentRunnerPlugin = {
  id: "tool-guard",
  register(api) {
    const config = guardConfig(api.config);
    const denied = config.denyArgsMatching ? new RegExp(config.denyArgsMatching, "i") : undefined;
    api.on(
      "before_tool_call",
      (event) => {
        if (matches(config.block, event.toolName)) {
          api.logger.info("tool call blocked", { toolName: event.toolName, runId: event.runId });
          return { block: true, blockReason: config.reason ?? `The tool "${event.toolName}" is disabled in this deployment.` };
        }
        if (denied?.test(JSON.stringify(event.params))) {
          return { block: true, blockReason: `The arguments of "${event.toolName}" are not allowed here.` };
        }
        return undefined;
      },
      { priority: config.priority },
    );
  },
};

export default plugin;
