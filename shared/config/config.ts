import { readFileSync, existsSync } from "node:fs";
import * as z from "zod";
import {
  BudgetsConfigSchema,
  ContextConfigSchema,
  HooksConfigSchema,
  PricingConfigSchema,
  ToolsConfigSchema,
  WorkspaceConfigSchema,
} from "./attempt-config";
import { DiagnosticsConfigSchema, LanesConfigSchema } from "./lanes-config";
import { AuthProfilesSchema, CompactionConfigSchema, LoopConfigSchema } from "./loop-config";
import { McpConfigSchema } from "./mcp-config";
import { PromptConfigSchema } from "./prompt-config";
import { applyChannelEnv, ChannelsConfigSchema } from "./channels-config";

/**
 * The agent configuration: which model runs, provider credentials and the
 * runner's limits. It comes from an optional JSON file (documented in
 * docs/configuration.md) with environment overrides for the common knobs, so
 * the same code configures a Lambda (env only) and `npm start` (file + env).
 */
const ProviderSchema = z
  .object({
    apiKey: z.string().optional(),
    baseURL: z.string().url().optional(),
    /** Extends the model idle watchdog for slow self-hosted providers; never past the run timeout. */
    timeoutSeconds: z.number().positive().optional(),
    /** `chat` (Chat Completions, default; works with Ollama/vLLM) or `responses`. OpenAI only. */
    api: z.enum(["chat", "responses"]).optional(),
    /** Several API keys, tried in order with cooldowns (shared/config/loop-config.ts); default: `apiKey` alone. */
    profiles: AuthProfilesSchema,
  })
  .strict();

/** A plugin module of the user's project: a path (relative to the config file), or `{path, config}`. */
const PluginRefSchema = z.union([
  z.string().min(1),
  z.object({ path: z.string().min(1), config: z.record(z.string(), z.unknown()).default({}) }).strict(),
]);

export const AgentConfigSchema = z
  .object({
    /** Plugin modules, bundled into the functions at synth (infra/bundle.ts) and registered at cold start. */
    plugins: z.array(PluginRefSchema).default([]),
    /** `provider/model`, e.g. `openai/gpt-4.1-mini`; `offline/echo` is the built-in deterministic model. */
    model: z.string().regex(/^[a-z0-9-]+\/.+$/, "model must be provider/model").default("offline/echo"),
    fallbackModels: z.array(z.string().regex(/^[a-z0-9-]+\/.+$/)).default([]),
    providers: z
      .object({ openai: ProviderSchema.default({}), anthropic: ProviderSchema.default({}) })
      .strict()
      .default({ openai: {}, anthropic: {} }),
    agent: z
      .object({
        systemPrompt: z.string().default("You are a helpful assistant. Answer concisely."),
        /** Whole-run budget (OpenClaw `agents.defaults.timeoutSeconds`); 0 = unlimited. */
        timeoutSeconds: z.number().int().min(0).default(172_800),
        /** Model idle watchdog: no stream chunk for this long aborts the model call (fractions allowed, for tests). */
        idleTimeoutSeconds: z.number().min(0).default(120),
        maxOutputTokens: z.number().int().positive().default(4096),
        /**
         * Hard cap on one tool result (head + tail kept) before it is stored or streamed. Unset = by
         * window size (16k chars below 100k tokens, 32k below 200k, 64k above), never over 30 % of it.
         */
        maxToolResultChars: z.number().int().min(2000).optional(),
        /** Model <-> tool round trips inside one attempt before it yields. */
        maxToolRounds: z.number().int().positive().default(32),
      })
      .strict()
      .default({
        systemPrompt: "You are a helpful assistant. Answer concisely.",
        timeoutSeconds: 172_800,
        idleTimeoutSeconds: 120,
        maxOutputTokens: 4096,
        maxToolRounds: 32,
      }),
    session: z
      .object({
        /** How long a second writer waits for the session write claim before "session busy". */
        writeLockAcquireTimeoutMs: z.number().int().min(0).default(60_000),
      })
      .strict()
      .default({ writeLockAcquireTimeoutMs: 60_000 }),
    events: z
      .object({
        /** How long the per-run event log is kept for replay. */
        retentionDays: z.number().int().positive().default(7),
      })
      .strict()
      .default({ retentionDays: 7 }),
    /** How long a function trusts the provider keys it read from Secrets Manager before reading them again. */
    secrets: z
      .object({ maxAgeSeconds: z.number().int().min(0).max(86_400).default(300) })
      .strict()
      .default({ maxAgeSeconds: 300 }),
    context: ContextConfigSchema.prefault({}),
    workspace: WorkspaceConfigSchema.prefault({}),
    tools: ToolsConfigSchema.prefault({}),
    hooks: HooksConfigSchema.prefault({}),
    /** MCP servers whose tools are offered (docs/mcp.md). */
    mcp: McpConfigSchema.prefault({}),
    /** How the system prompt is built (docs/configuration.md "System prompt"). */
    prompt: PromptConfigSchema.prefault({}),
    budgets: BudgetsConfigSchema.prefault({}),
    pricing: PricingConfigSchema.default({}),
    compaction: CompactionConfigSchema.prefault({}),
    loop: LoopConfigSchema.prefault({}),
    lanes: LanesConfigSchema.prefault({}),
    diagnostics: DiagnosticsConfigSchema.prefault({}),
    /** Telegram / Slack accounts and signed inbound webhooks (shared/config/channels-config.ts). */
    channels: ChannelsConfigSchema.prefault({}),
  })
  .strict();

export type AgentConfig = z.infer<typeof AgentConfigSchema>;

export const OFFLINE_MODEL = "offline/echo";
export const DEFAULT_OPENAI_MODEL = "openai/gpt-4.1-mini";
export const DEFAULT_ANTHROPIC_MODEL = "anthropic/claude-sonnet-4-5";

export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

type Env = Record<string, string | undefined>;

/** Reads the optional config file, then applies env overrides, then validates. */
export function loadAgentConfig(env: Env = process.env, filePath = env.AGENT_RUNNER_CONFIG): AgentConfig {
  return parseAgentConfig(filePath ? readConfigFile(filePath) : {}, env);
}

/** Validates a configuration object (as the JSON file holds it) after the environment overrides. */
export function parseAgentConfig(raw: Record<string, unknown>, env: Env = {}): AgentConfig {
  const merged = applyChannelEnv(applyEnvOverrides(raw, env), env);
  const parsed = AgentConfigSchema.safeParse(merged);
  if (!parsed.success) {
    throw new ConfigError(`invalid agent configuration: ${z.prettifyError(parsed.error)}`);
  }
  return parsed.data;
}

function readConfigFile(filePath: string): Record<string, unknown> {
  if (!existsSync(filePath)) throw new ConfigError(`config file not found: ${filePath}`);
  try {
    return JSON.parse(readFileSync(filePath, "utf8")) as Record<string, unknown>;
  } catch (error) {
    throw new ConfigError(`config file ${filePath} is not valid JSON: ${(error as Error).message}`);
  }
}

function applyEnvOverrides(base: Record<string, unknown>, env: Env): Record<string, unknown> {
  const providers = (base.providers ?? {}) as Record<string, Record<string, unknown>>;
  const openai = { ...(providers.openai ?? {}) };
  const anthropic = { ...(providers.anthropic ?? {}) };
  if (env.OPENAI_API_KEY) openai.apiKey = env.OPENAI_API_KEY;
  if (env.OPENAI_BASE_URL) openai.baseURL = env.OPENAI_BASE_URL;
  if (env.ANTHROPIC_API_KEY) anthropic.apiKey = env.ANTHROPIC_API_KEY;
  if (env.ANTHROPIC_BASE_URL) anthropic.baseURL = env.ANTHROPIC_BASE_URL;
  const result: Record<string, unknown> = { ...base, providers: { ...providers, openai, anthropic } };
  if (env.MODEL) result.model = env.MODEL;
  else if (base.model === undefined) result.model = defaultModelFor(openai, anthropic);
  return result;
}

/** With a key (or an OpenAI-compatible base URL) and no model named, pick that provider's model. */
function defaultModelFor(openai: Record<string, unknown>, anthropic: Record<string, unknown>): string {
  if (openai.apiKey || openai.baseURL) return DEFAULT_OPENAI_MODEL;
  if (anthropic.apiKey || anthropic.baseURL) return DEFAULT_ANTHROPIC_MODEL;
  return OFFLINE_MODEL;
}
