import { BUNDLED_PLUGINS } from "#agent-runner/plugins";
import type { AgentConfig } from "../config/config";
import { loadPlugins, type LoadedPlugins } from "../plugins/load";
import type { RunDeps } from "../run/deps";

/**
 * The plugin modules bundled into this function (infra/bundle.ts), in the
 * order the configuration names them, registered once per cold start.
 */
export function loadBundledPlugins(config: AgentConfig, log: RunDeps["log"]): LoadedPlugins {
  const entries = config.plugins.map((ref) => (typeof ref === "string" ? { path: ref, config: {} } : { path: ref.path, config: ref.config }));
  return loadPlugins(BUNDLED_PLUGINS, entries, log, ({ hook, id, error }) => log.warn("hook failed", { hook, id, error: String(error) }));
}
