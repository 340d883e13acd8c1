import type { AgentConfig } from "../config/config";
import type { RunDeps } from "../ports/run-deps";

export { silentLog, type Log, type RunDeps } from "../ports/run-deps";

/**
 * The dependencies with the configuration a run was accepted under: the same
 * object when that is this deployment's, else the stored snapshot of that
 * version, so a deploy in the middle of a run never splits it.
 */
export async function depsForConfigVersion<D extends RunDeps>(deps: D, version: string | undefined): Promise<D> {
  if (!version || version === deps.configVersion || !deps.configFor) return deps;
  return { ...deps, config: await deps.configFor(version), configVersion: version };
}
