/**
 * The agent configuration, resolved when the CDK app is synthesized: one
 * configuration for `npm start`, `npm run synth` and `cdk deploy`.
 *
 * Sources, later wins: the JSON file (prop, `-c config=path`,
 * `AGENT_RUNNER_CONFIG`, else `./agent-runner.config.json` when present), the
 * environment overrides of docs/configuration.md (`MODEL`, `OPENAI_BASE_URL`,
 * `ANTHROPIC_BASE_URL`; `OPENAI_API_KEY` / `ANTHROPIC_API_KEY` only pick the
 * default model and fill a *local* secret, they never reach the template),
 * then CDK context (`-c model=`, `-c openaiBaseUrl=`, `-c anthropicBaseUrl=`).
 * Plugin paths resolve against the config file's folder and must exist.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import { ConfigError, loadAgentConfig, parseAgentConfig, type AgentConfig } from "../shared/config/config";
import { splitSecrets, type SplitConfig } from "../shared/config/deployed";
import { CHANNEL_ENV_KEYS } from "../shared/config/channels-config";

export const DEFAULT_CONFIG_FILE = "agent-runner.config.json";
export const DEFAULT_WORKSPACE_DIR = "workspace";

type Env = Record<string, string | undefined>;

export interface AgentConfigSource {
  /** A config file path, or the configuration itself (an object, as in the JSON file). */
  config?: string | Record<string, unknown>;
  /** Context overrides (strings from `-c key=value`). */
  model?: string;
  openaiBaseUrl?: string;
  anthropicBaseUrl?: string;
  /** The workspace folder (AGENTS.md, SOUL.md, ..., skills/); default `workspace/` when it exists. */
  workspaceDir?: string;
  /** More plugin modules (paths relative to baseDir), registered after the configuration's own. */
  plugins?: readonly string[];
  /** Folder relative paths resolve against (default: the process's working directory). */
  baseDir?: string;
  processEnv?: Env;
}

export interface ResolvedAgentConfig extends SplitConfig {
  config: AgentConfig;
  /** Where the file was (absent for an inline object or no file). */
  configFile?: string;
  /** Absolute plugin module paths, in configuration order. */
  pluginModules: string[];
  /** Absolute workspace folder, when there is one. */
  workspaceDir?: string;
}

export function resolveAgentConfig(source: AgentConfigSource = {}): ResolvedAgentConfig {
  const env = source.processEnv ?? process.env;
  const baseDir = resolve(source.baseDir ?? process.cwd());
  const configFile = configFileOf(source, env, baseDir);
  const fileDir = configFile ? dirname(configFile) : baseDir;
  const overrides: Env = {
    MODEL: source.model ?? env.MODEL,
    OPENAI_BASE_URL: source.openaiBaseUrl ?? env.OPENAI_BASE_URL,
    ANTHROPIC_BASE_URL: source.anthropicBaseUrl ?? env.ANTHROPIC_BASE_URL,
    OPENAI_API_KEY: env.OPENAI_API_KEY,
    ANTHROPIC_API_KEY: env.ANTHROPIC_API_KEY,
    // The `default` channel account / hook (docs/channels.md); secrets among them only fill the secret.
    ...Object.fromEntries(CHANNEL_ENV_KEYS.map((key) => [key, env[key]])),
  };
  const named =
    typeof source.config === "object"
      ? parseAgentConfig(source.config, overrides)
      : loadAgentConfig(overrides, configFile);
  const extra = (source.plugins ?? []).map((path) => resolve(baseDir, path));
  const config = extra.length > 0 ? { ...named, plugins: [...named.plugins, ...extra] } : named;
  const pluginModules = config.plugins.map((ref) => resolvePlugin(typeof ref === "string" ? ref : ref.path, fileDir, configFile));
  const workspaceDir = workspaceDirOf(source, config, fileDir, baseDir);
  return { config, configFile, pluginModules, workspaceDir, ...splitSecrets(withWorkspace(config, workspaceDir)) };
}

function configFileOf(source: AgentConfigSource, env: Env, baseDir: string): string | undefined {
  if (typeof source.config === "string") return resolve(baseDir, source.config);
  if (typeof source.config === "object") return undefined;
  if (env.AGENT_RUNNER_CONFIG) return resolve(baseDir, env.AGENT_RUNNER_CONFIG);
  const fallback = join(baseDir, DEFAULT_CONFIG_FILE);
  return existsSync(fallback) ? fallback : undefined;
}

const PLUGIN_EXTENSIONS = ["", ".ts", ".mts", ".js", ".mjs"];

function resolvePlugin(path: string, fileDir: string, configFile: string | undefined): string {
  const base = isAbsolute(path) ? path : resolve(fileDir, path);
  const found = PLUGIN_EXTENSIONS.map((ext) => `${base}${ext}`).find((candidate) => existsSync(candidate) && statSync(candidate).isFile());
  if (!found) {
    throw new ConfigError(`plugin module not found: "${path}" (looked for ${base}) named in ${configFile ?? "the inline configuration"}`);
  }
  return found;
}

function workspaceDirOf(source: AgentConfigSource, config: AgentConfig, fileDir: string, baseDir: string): string | undefined {
  if (config.workspace.source === "none" || config.workspace.source === "table") return undefined;
  const named = source.workspaceDir ?? config.workspace.dir;
  if (named) {
    const dir = resolve(source.workspaceDir ? baseDir : fileDir, named);
    if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new ConfigError(`workspace folder not found: ${dir}`);
    return dir;
  }
  const fallback = join(baseDir, DEFAULT_WORKSPACE_DIR);
  return existsSync(fallback) && statSync(fallback).isDirectory() ? fallback : undefined;
}

/** The deployed configuration names the workspace the way functions find it: the folder shipped with their code. */
function withWorkspace(config: AgentConfig, workspaceDir: string | undefined): AgentConfig {
  if (!workspaceDir) return config;
  return { ...config, workspace: { ...config.workspace, source: "dir", dir: BUNDLED_WORKSPACE_DIR } };
}

/** The workspace folder inside a function's asset (resolved against LAMBDA_TASK_ROOT at run time). */
export const BUNDLED_WORKSPACE_DIR = "workspace";

/** Every file of the workspace folder (relative path -> content), for hashing and shipping. */
export function workspaceFiles(dir: string): Record<string, string> {
  const files: Record<string, string> = {};
  const walk = (current: string) => {
    for (const entry of readdirSync(current, { withFileTypes: true })) {
      const full = join(current, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile()) files[relative(dir, full)] = readFileSync(full, "utf8");
    }
  };
  walk(dir);
  return files;
}
