import * as z from "zod";

/**
 * `mcp.servers`: MCP servers over Streamable HTTP whose tools the agent is
 * offered (docs/mcp.md). A header value is either plain text, shipped with
 * the deployed configuration as it is, or a reference to a secret:
 *
 *   "headers": { "authorization": { "secret": "mcp/docs/token", "prefix": "Bearer " } }
 *
 * The secret's value lives in the provider-keys secret (Secrets Manager)
 * under that name, which only the attempt function reads. `value` may carry
 * it in a local config file: like a provider `apiKey`, it is cut out at synth
 * (shared/config/deployed.ts) and never shipped.
 */
export const MCP_SERVER_NAME = /^[A-Za-z0-9_-]{1,32}$/;
export const MCP_SECRET_NAME = /^[A-Za-z0-9_./-]{1,128}$/;

export const McpSecretRefSchema = z
  .object({
    secret: z.string().regex(MCP_SECRET_NAME, "secret names are letters, digits and _ . / -"),
    /** Put in front of the secret's value (e.g. "Bearer "). */
    prefix: z.string().optional(),
    /** The value itself: local configuration only; filled from the secret in a deployment. */
    value: z.string().optional(),
  })
  .strict();
export type McpSecretRef = z.infer<typeof McpSecretRefSchema>;

export const McpHeaderValueSchema = z.union([z.string(), McpSecretRefSchema]);
export type McpHeaderValue = z.infer<typeof McpHeaderValueSchema>;

export const McpServerSchema = z
  .object({
    url: z.string().url(),
    headers: z.record(z.string().min(1), McpHeaderValueSchema).default({}),
    /** Only these tools of the server (its own names; a trailing `*` matches a prefix). Default: all. */
    toolsAllow: z.array(z.string().min(1)).optional(),
    /** Connecting, listing and each call give up after this long. */
    timeoutSeconds: z.number().positive().max(300).default(30),
  })
  .strict();
export type McpServerConfig = z.infer<typeof McpServerSchema>;

export const McpConfigSchema = z
  .object({
    servers: z
      .record(z.string().regex(MCP_SERVER_NAME, "MCP server names are 1-32 letters, digits, _ or -"), McpServerSchema)
      .default({}),
    /** How long a warm attempt function reuses a server's tool list before listing it again. */
    listTtlSeconds: z.number().int().min(0).default(300),
  })
  .strict();
export type McpConfig = z.infer<typeof McpConfigSchema>;
