import type { SecretsProvider } from "@aws-lambda-powertools/parameters/secrets";
import type { RunDeps } from "../run/deps";

/** How long a container trusts the provider keys it read, unless the template says otherwise. */
export const DEFAULT_PROVIDER_KEYS_MAX_AGE_SECONDS = 300;

/** The provider-keys secret's current text, as a container sees it. `"{}"` when the function has no secret. */
export type ProviderKeysReader = () => Promise<string>;

/**
 * Reads the provider-keys secret through Powertools' cache, which re-reads it
 * once `maxAgeSeconds` have passed: a key filled in after the deploy is
 * seen without one. A failure is never kept: at a cold start it fails that
 * invocation only (the next one reads again; the SDK already retried
 * throttling and 5xx), and once a container has keys, a failed refresh keeps
 * the ones it has and says so in the log.
 */
export function createProviderKeysReader(region: string, secretArn: string | undefined, maxAgeSeconds: number, log: RunDeps["log"]): ProviderKeysReader {
  if (!secretArn) return async () => "{}";
  // Imported on the first read: the Secrets Manager client is a lazy chunk of the bundle (issue 15, import times).
  let secrets: Promise<SecretsProvider> | undefined;
  const provider = () =>
    (secrets ??= import("@aws-lambda-powertools/parameters/secrets").then(({ SecretsProvider }) => new SecretsProvider({ clientConfig: { region } })).catch((error: unknown) => {
      secrets = undefined;
      throw error;
    }));
  let lastGood: string | undefined;
  return async () => {
    try {
      const text = await (await provider()).get(secretArn, { maxAge: maxAgeSeconds });
      if (typeof text !== "string") throw new Error("the provider-keys secret has no SecretString");
      parseProviderKeys(text);
      lastGood = text;
      return text;
    } catch (error) {
      if (lastGood === undefined) throw error;
      log.warn("provider keys refresh failed; keeping the keys read earlier", { error: String(error) });
      return lastGood;
    }
  };
}

/** The secret's JSON object; empty placeholders mean "not configured" (the offline model stays the default). */
export function parseProviderKeys(text: string): Record<string, string> {
  const parsed = JSON.parse(text) as unknown;
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) throw new Error("the provider-keys secret is not a JSON object");
  return Object.fromEntries(Object.entries(parsed).filter((entry): entry is [string, string] => typeof entry[1] === "string" && entry[1] !== ""));
}

export function maxAgeFromEnv(value: string | undefined): number {
  const seconds = value === undefined || value === "" ? NaN : Number(value);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds : DEFAULT_PROVIDER_KEYS_MAX_AGE_SECONDS;
}
