import type { AgentConfig } from "../config/config";
import type { AuthProfileConfig } from "../config/loop-config";
import { modelChain } from "../providers/model-refs";

/**
 * Auth profiles and context windows of the models in a run's chain, from
 * configuration. A provider with `profiles` rotates through them in order; a
 * provider without has one profile, `default`, holding its `apiKey`.
 */
export const DEFAULT_PROFILE_ID = "default";

type ProviderId = keyof AgentConfig["providers"];

export function providerOf(ref: string): string {
  return ref.slice(0, ref.indexOf("/"));
}

function providerSettings(config: AgentConfig, providerId: string) {
  return (config.providers as Record<string, AgentConfig["providers"][ProviderId] | undefined>)[providerId];
}

/** The provider's profiles in the order they are tried; [] for providers without credentials (offline). */
export function profilesFor(config: AgentConfig, providerId: string): AuthProfileConfig[] {
  const settings = providerSettings(config, providerId);
  if (!settings) return [];
  if (settings.profiles && settings.profiles.length > 0) return settings.profiles;
  return [{ id: DEFAULT_PROFILE_ID, apiKey: settings.apiKey ?? "" }];
}

/** Profiles per chain model (at least 1 each): the loop state's rotation budget and the iteration cap. */
export function profileCounts(config: AgentConfig, primary: string): number[] {
  return modelChain(config, primary).map((ref) => Math.max(1, profilesFor(config, providerOf(ref)).length));
}

/** The configuration an attempt resolves its provider from, with the chosen profile's key in place. */
export function configForProfile(config: AgentConfig, ref: string, profileId: string | undefined): AgentConfig {
  if (!profileId) return config;
  const providerId = providerOf(ref);
  const profile = profilesFor(config, providerId).find((p) => p.id === profileId);
  const settings = providerSettings(config, providerId);
  if (!profile || !settings || profile.apiKey === "" || profile.apiKey === settings.apiKey) return config;
  return { ...config, providers: { ...config.providers, [providerId]: { ...settings, apiKey: profile.apiKey } } };
}

/** The window compaction and the precheck size for: the configured budget, capped by the model's own window. */
export function contextWindowFor(config: AgentConfig, ref: string): number {
  const own = config.context.modelContextWindows[ref];
  return own === undefined ? config.context.contextTokens : Math.min(own, config.context.contextTokens);
}
