import type { McpHeaderValue } from "./mcp-config";

/**
 * MCP header secrets in the deployed configuration (shared/config/deployed.ts):
 * at synth a reference keeps only its name (a `value` from a local config
 * file moves to the secret's values); in the function that reads the secret
 * the value is put back. Works on the raw configuration objects, so it runs
 * before and after zod alike.
 */
type RawServers = Record<string, { headers?: Record<string, McpHeaderValue> } & Record<string, unknown>>;

function serversOf(config: Record<string, unknown>): RawServers {
  const mcp = config.mcp as { servers?: RawServers } | undefined;
  return mcp?.servers ?? {};
}

function mapHeaders(config: Record<string, unknown>, map: (value: Exclude<McpHeaderValue, string>) => McpHeaderValue): Record<string, unknown> {
  const servers = serversOf(config);
  if (Object.keys(servers).length === 0) return config;
  const mapped = Object.fromEntries(
    Object.entries(servers).map(([name, server]) => [
      name,
      { ...server, headers: Object.fromEntries(Object.entries(server.headers ?? {}).map(([header, value]) => [header, typeof value === "string" ? value : map(value)])) },
    ]),
  );
  return { ...config, mcp: { ...(config.mcp as Record<string, unknown>), servers: mapped } };
}

/** Names every secret reference uses, in configuration order, without duplicates. */
export function mcpSecretNames(config: Record<string, unknown>): string[] {
  const names = new Set<string>();
  for (const server of Object.values(serversOf(config))) {
    for (const value of Object.values(server.headers ?? {})) if (typeof value !== "string") names.add(value.secret);
  }
  return [...names];
}

/** The configuration without secret values, and the values it carried (name -> value). */
export function cutMcpSecrets(config: Record<string, unknown>): { config: Record<string, unknown>; values: Record<string, string> } {
  const values: Record<string, string> = {};
  const cut = mapHeaders(config, ({ value, ...ref }) => {
    if (value) values[ref.secret] = value;
    return ref;
  });
  return { config: cut, values };
}

/** Fills each reference from the secret's values (absent names stay unfilled: the call then fails with a clear tool error). */
export function fillMcpSecrets(config: Record<string, unknown>, secrets: Record<string, string>): Record<string, unknown> {
  return mapHeaders(config, (ref) => (secrets[ref.secret] ? { ...ref, value: secrets[ref.secret] } : ref));
}
