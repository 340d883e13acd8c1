import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { McpServerConfig } from "../../../config/mcp-config";
import { resolveMcpHeaders } from "./headers";

/**
 * One short-lived MCP session over Streamable HTTP (the official SDK client):
 * connect (initialize), do one thing, close. A Lambda may be frozen between
 * invocations, so no connection is kept open across calls; what is reused
 * across attempts of a warm function is the tool list (./catalog.ts).
 * The SDK (with ajv, about 170 KB of the attempt bundle) is imported on the
 * first connection, so a deployment without MCP servers never evaluates it.
 */
export const CLIENT_INFO = { name: "agent-runner", version: "1.0.0" } as const;

export async function withMcpClient<T>(server: McpServerConfig, signal: AbortSignal | undefined, use: (client: Client, timeoutMs: number) => Promise<T>): Promise<T> {
  const timeoutMs = server.timeoutSeconds * 1000;
  const [{ Client }, { StreamableHTTPClientTransport }] = await Promise.all([
    import("@modelcontextprotocol/sdk/client/index.js"),
    import("@modelcontextprotocol/sdk/client/streamableHttp.js"),
  ]);
  const transport = new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: resolveMcpHeaders(server.headers) } });
  const client = new Client(CLIENT_INFO);
  try {
    await client.connect(transport, { timeout: timeoutMs, ...(signal ? { signal } : {}) });
    return await use(client, timeoutMs);
  } finally {
    // Ends the server-side session (DELETE) when there is one; a dead server must not turn into a second error.
    await transport.terminateSession().catch(() => undefined);
    await client.close().catch(() => undefined);
  }
}
