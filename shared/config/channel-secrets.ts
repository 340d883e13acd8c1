/**
 * Channel secrets travel like provider keys: cut out of the deployed
 * configuration at synth, one value each in the runner's secret, joined back
 * at cold start. Names: `channels/telegram/<id>/botToken`, ... (SECRET_FIELDS).
 */
const SECRET_FIELDS = {
  telegram: ["botToken", "webhookSecret"],
  slack: ["signingSecret", "botToken"],
} as const;

type Raw = Record<string, unknown>;

export function channelSecretName(section: "telegram" | "slack" | "hooks", id: string, field: string): string {
  return `channels/${section}/${id}/${field}`;
}

/** Blanks every channel secret; returns the public config, the secret names and the values the config carried. */
export function splitChannelSecrets(config: Raw): { config: Raw; secretKeys: string[]; secretValues: Record<string, string> } {
  const channels = config.channels as Raw | undefined;
  if (!channels) return { config, secretKeys: [], secretValues: {} };
  const secretKeys: string[] = [];
  const secretValues: Record<string, string> = {};
  const cut = (section: "telegram" | "slack" | "hooks", id: string, entry: Raw, fields: readonly string[]): Raw => {
    const out = { ...entry };
    for (const field of fields) {
      const name = channelSecretName(section, id, field);
      secretKeys.push(name);
      if (typeof entry[field] === "string" && entry[field] !== "") secretValues[name] = entry[field] as string;
      out[field] = "";
    }
    return out;
  };
  const next: Raw = { ...channels };
  for (const section of ["telegram", "slack"] as const) {
    const accounts = ((channels[section] as Raw | undefined)?.accounts ?? {}) as Record<string, Raw>;
    const cutAccounts = Object.fromEntries(Object.entries(accounts).map(([id, acc]) => [id, cut(section, id, acc, SECRET_FIELDS[section])]));
    next[section] = { ...(channels[section] as Raw), accounts: cutAccounts };
  }
  const hooks = (channels.hooks ?? {}) as Record<string, Raw>;
  next.hooks = Object.fromEntries(Object.entries(hooks).map(([id, hook]) => [id, cut("hooks", id, hook, ["secret"])]));
  return { config: { ...config, channels: next }, secretKeys, secretValues };
}

/** Puts the secret's values back into the public config's channel entries. */
export function joinChannelSecrets(config: Raw, secrets: Record<string, string>): Raw {
  const channels = config.channels as Raw | undefined;
  if (!channels) return config;
  const fill = (section: "telegram" | "slack" | "hooks", id: string, entry: Raw, fields: readonly string[]): Raw => {
    const out = { ...entry };
    for (const field of fields) {
      const value = secrets[channelSecretName(section, id, field)];
      if (value) out[field] = value;
    }
    return out;
  };
  const next: Raw = { ...channels };
  for (const section of ["telegram", "slack"] as const) {
    const accounts = ((channels[section] as Raw | undefined)?.accounts ?? {}) as Record<string, Raw>;
    next[section] = { ...(channels[section] as Raw), accounts: Object.fromEntries(Object.entries(accounts).map(([id, a]) => [id, fill(section, id, a, SECRET_FIELDS[section])])) };
  }
  const hooks = (channels.hooks ?? {}) as Record<string, Raw>;
  next.hooks = Object.fromEntries(Object.entries(hooks).map(([id, hook]) => [id, fill("hooks", id, hook, ["secret"])]));
  return { ...config, channels: next };
}
