import type { HooksConfig } from "../config/attempt-config";
import { HookRegistry, type HookErrorReport } from "./registry";

/**
 * Hooks declared in configuration: the serverless stand-in for installing a
 * plugin. Tool blocks become before_tool_call handlers (with their priority);
 * system contexts and the tool allow-list become one before_prompt_build
 * handler. Code can register more on the returned registry.
 */
export function hooksFromConfig(config: HooksConfig, onError?: (report: HookErrorReport) => void): HookRegistry {
  const hooks = new HookRegistry(onError);
  config.blockTools.forEach((rule, index) => {
    const matches = toolMatcher(rule.tools);
    hooks.register(
      "before_tool_call",
      (event) => (matches(event.toolName) ? { block: true, blockReason: rule.reason ?? `The tool "${event.toolName}" is blocked by configuration.` } : undefined),
      { id: `config.blockTools[${index}]`, priority: rule.priority },
    );
  });
  if (config.prependSystemContext || config.appendSystemContext || config.toolsAllow) {
    hooks.register(
      "before_prompt_build",
      () => ({
        ...(config.prependSystemContext ? { prependSystemContext: config.prependSystemContext } : {}),
        ...(config.appendSystemContext ? { appendSystemContext: config.appendSystemContext } : {}),
        ...(config.toolsAllow ? { toolsAllow: config.toolsAllow } : {}),
      }),
      { id: "config.prompt" },
    );
  }
  return hooks;
}

/** `name` matches exactly; `prefix*` matches a prefix; `*` matches every tool. */
export function toolMatcher(patterns: readonly string[]): (toolName: string) => boolean {
  return (toolName) =>
    patterns.some((pattern) => (pattern.endsWith("*") ? toolName.startsWith(pattern.slice(0, -1)) : toolName === pattern));
}
