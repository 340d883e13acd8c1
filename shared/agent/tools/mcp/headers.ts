import type { McpHeaderValue } from "../../../config/mcp-config";

/** A header refers to a secret that the provider-keys secret does not hold (or that is empty). */
export class McpSecretMissingError extends Error {
  override readonly name = "McpSecretMissingError";
  constructor(readonly secretName: string) {
    super(`the secret "${secretName}" is not set (fill it in the provider-keys secret)`);
  }
}

/**
 * Header values as they are sent: plain text as configured, a secret
 * reference as its prefix plus the value joinSecrets put in `value` (only in
 * the function that reads the secret).
 */
export function resolveMcpHeaders(headers: Readonly<Record<string, McpHeaderValue>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value === "string") out[name] = value;
    else if (value.value) out[name] = `${value.prefix ?? ""}${value.value}`;
    else throw new McpSecretMissingError(value.secret);
  }
  return out;
}
