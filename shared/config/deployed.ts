import { createHash } from "node:crypto";
import { AgentConfigSchema, ConfigError, type AgentConfig } from "./config";
import { cutMcpSecrets, fillMcpSecrets, mcpSecretNames } from "./mcp-secrets";
import { joinChannelSecrets, splitChannelSecrets } from "./channel-secrets";

/**
 * The agent configuration as it is deployed: resolved at synth (file, CDK
 * context, environment overrides), validated, and shipped next to every
 * function's code in `agent-config.json`. Provider keys never travel with
 * it: they are cut out here and live in Secrets Manager, one secret holding
 * one value per provider key and per auth profile (SECRET_KEY_NAMES).
 *
 * `version` is a content hash of what is shipped. A run stamps the version it
 * was accepted under, and every function of that run uses that version (the
 * snapshot is kept in the table), so a deploy in the middle of a run never
 * splits it across two configurations.
 */
export const DEPLOYED_CONFIG_FILE = "agent-config.json";

export interface DeployedConfig {
  v: 1;
  version: string;
  /** AgentConfig with every API key blanked. */
  config: Record<string, unknown>;
  /** Names of the values the provider-keys secret holds (empty placeholders at deploy). */
  secretKeys: string[];
  /** Names of the channel secrets (bot tokens, signing secrets), in their own secret; absent without channels. */
  channelSecretKeys?: string[];
}

type ProviderId = "openai" | "anthropic";
const PROVIDERS: readonly ProviderId[] = ["openai", "anthropic"];

/** `OPENAI_API_KEY` for a provider's single key; `openai/<profileId>` for each auth profile. */
export function providerKeyName(provider: ProviderId): string {
  return `${provider.toUpperCase()}_API_KEY`;
}
export function profileKeyName(provider: ProviderId, profileId: string): string {
  return `${provider}/${profileId}`;
}

export interface SplitConfig {
  deployed: DeployedConfig;
  /** The keys the configuration carried (never written to the template; locally they fill the local secret). */
  secretValues: Record<string, string>;
}

export function splitSecrets(config: AgentConfig): SplitConfig {
  const secretValues: Record<string, string> = {};
  const secretKeys = PROVIDERS.map(providerKeyName);
  const providers: Record<string, unknown> = {};
  for (const id of PROVIDERS) {
    const provider = config.providers[id];
    if (provider.apiKey) secretValues[providerKeyName(id)] = provider.apiKey;
    const profiles = provider.profiles?.map((profile) => {
      const name = profileKeyName(id, profile.id);
      secretKeys.push(name);
      secretValues[name] = profile.apiKey;
      return { id: profile.id, apiKey: "" };
    });
    providers[id] = { ...provider, apiKey: undefined, ...(profiles ? { profiles } : {}) };
  }
  // MCP header secrets (shared/config/mcp-secrets.ts) and channel secrets (channel-secrets.ts): only their names are shipped.
  const mcp = cutMcpSecrets(JSON.parse(JSON.stringify({ ...config, providers })) as Record<string, unknown>);
  Object.assign(secretValues, mcp.values);
  secretKeys.push(...mcpSecretNames(mcp.config).filter((name) => !secretKeys.includes(name)));
  const channels = splitChannelSecrets(mcp.config);
  const publicConfig = channels.config;
  Object.assign(secretValues, channels.secretValues);
  const channelSecretKeys = channels.secretKeys.length > 0 ? { channelSecretKeys: channels.secretKeys } : {};
  return { deployed: { v: 1, version: configVersion(publicConfig), config: publicConfig, secretKeys, ...channelSecretKeys }, secretValues };
}

/** The configuration a function runs with: the deployed one plus the keys its secret holds. */
export function joinSecrets(publicConfig: Record<string, unknown>, secrets: Record<string, string>): AgentConfig {
  const providers = { ...(publicConfig.providers as Record<string, Record<string, unknown>>) };
  for (const id of PROVIDERS) {
    const provider = { ...(providers[id] ?? {}) };
    const key = secrets[providerKeyName(id)];
    if (key) provider.apiKey = key;
    if (Array.isArray(provider.profiles)) {
      // Every function knows the profiles (the loop counts them); only the function that calls the
      // provider reads the secret, so elsewhere the keys stay empty. An unfilled key fails as a 401.
      provider.profiles = (provider.profiles as { id: string }[]).map((profile) => ({ id: profile.id, apiKey: secrets[profileKeyName(id, profile.id)] ?? "" }));
    }
    providers[id] = provider;
  }
  const parsed = AgentConfigSchema.safeParse(joinChannelSecrets(fillMcpSecrets({ ...publicConfig, providers }, secrets), secrets));
  if (!parsed.success) throw new ConfigError(`deployed configuration is invalid: ${parsed.error.message}`);
  return parsed.data;
}

export function configVersion(publicConfig: unknown): string {
  return createHash("sha256").update(stableJson(publicConfig)).digest("hex").slice(0, 16);
}

function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    return `{${entries.sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}
