import { readFileSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import type { AgentConfig } from "../config/config";
import { ConfigError } from "../config/config";
import { DEPLOYED_CONFIG_FILE, joinSecrets, type DeployedConfig } from "../config/deployed";

export interface DeployedAgentConfig {
  version: string;
  config: AgentConfig;
  /** As shipped (keys blanked): what a run's config snapshot stores. */
  publicConfig: Record<string, unknown>;
}

/**
 * Reads the configuration shipped with this function's code. A relative
 * workspace folder is the one in the asset (next to the code).
 */
export function loadDeployedConfig(taskRoot: string, secrets: Record<string, string>): DeployedAgentConfig {
  const file = join(taskRoot, DEPLOYED_CONFIG_FILE);
  let deployed: DeployedConfig;
  try {
    deployed = JSON.parse(readFileSync(file, "utf8")) as DeployedConfig;
  } catch (error) {
    throw new ConfigError(`cannot read the deployed configuration ${file}: ${(error as Error).message}`);
  }
  if (deployed.v !== 1) throw new ConfigError(`unsupported deployed configuration version ${String(deployed.v)} in ${file}`);
  const config = withTaskRootWorkspace(joinSecrets(deployed.config, secrets), taskRoot);
  return { version: deployed.version, config, publicConfig: deployed.config };
}

function withTaskRootWorkspace(config: AgentConfig, taskRoot: string): AgentConfig {
  const dir = config.workspace.dir;
  if (!dir || isAbsolute(dir)) return config;
  return { ...config, workspace: { ...config.workspace, dir: resolve(taskRoot, dir) } };
}
