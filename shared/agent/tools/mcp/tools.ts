import type { McpConfig, McpServerConfig } from "../../../config/mcp-config";
import { formatError } from "../lifecycle";
import type { ToolDefinition, ToolOutput } from "../types";
import { warmCatalog, type McpCatalog, type McpListedTool } from "./catalog";
import { withMcpClient } from "./connection";
import { allowedByList, mcpToolName, serverOfToolName } from "./names";

/** The MCP part of one attempt's tool surface. */
export interface McpToolSet {
  tools: ToolDefinition[];
  /** Servers that could not be listed for this attempt: name -> why (their tools are not offered). */
  unavailable: Map<string, string>;
}

export const EMPTY_MCP_TOOLS: McpToolSet = { tools: [], unavailable: new Map() };

/**
 * Lists every configured server (in parallel, each bounded by its timeout)
 * and turns its tools into ordinary tool definitions, so they go through the
 * same lifecycle as every other tool: hooks, argument validation, time
 * limit, size cap, the ledger. A server that is down only takes its own
 * tools away, for this attempt.
 */
export async function loadMcpTools(config: McpConfig, options: { catalog?: McpCatalog; signal?: AbortSignal } = {}): Promise<McpToolSet> {
  const servers = Object.entries(config.servers);
  if (servers.length === 0) return EMPTY_MCP_TOOLS;
  const catalog = options.catalog ?? warmCatalog;
  const listings = await Promise.all(servers.map(([name, server]) => catalog.list(name, server, config.listTtlSeconds * 1000, options.signal)));
  const set: McpToolSet = { tools: [], unavailable: new Map() };
  servers.forEach(([name, server], i) => {
    const listing = listings[i];
    if (!listing.ok) set.unavailable.set(name, listing.reason);
    else set.tools.push(...listing.tools.filter((tool) => allowedByList(tool.name, server.toolsAllow)).map((tool) => mcpTool(name, server, tool)));
  });
  return set;
}

export function mcpTool(serverName: string, server: McpServerConfig, listed: McpListedTool): ToolDefinition {
  return {
    name: mcpToolName(serverName, listed.name),
    description: listed.description?.trim() || listed.annotations?.title || `${listed.name} (MCP server ${serverName})`,
    parameters: objectSchema(listed.inputSchema),
    // MCP's default for readOnlyHint is false: only a server's explicit hint makes a call safe to repeat.
    mutating: listed.annotations?.readOnlyHint !== true,
    timeoutMs: server.timeoutSeconds * 1000,
    async execute(args, context) {
      try {
        return await withMcpClient(server, context.signal, async (client, timeout) => {
          const result = await client.callTool({ name: listed.name, arguments: args }, undefined, { timeout, signal: context.signal });
          return toolOutput(result);
        });
      } catch (error) {
        return { content: `Error: the MCP server "${serverName}" could not run ${listed.name}: ${formatError(error)}`, isError: true };
      }
    },
  };
}

/** Text blocks as they are; structured content as JSON; anything else named, not inlined (images, audio). */
export function toolOutput(result: Record<string, unknown>): ToolOutput {
  const blocks = Array.isArray(result.content) ? (result.content as Record<string, unknown>[]) : [];
  const parts = blocks.map((block) => {
    if (block.type === "text" && typeof block.text === "string") return block.text;
    if (block.type === "resource" && block.resource && typeof (block.resource as { text?: unknown }).text === "string") return (block.resource as { text: string }).text;
    if (block.type === "resource_link") return `[resource: ${String(block.uri ?? "")}]`;
    return `[${String(block.type ?? "content")} omitted]`;
  });
  if (parts.length === 0 && result.structuredContent !== undefined) parts.push(JSON.stringify(result.structuredContent));
  if (parts.length === 0 && "toolResult" in result) parts.push(JSON.stringify(result.toolResult));
  return { content: parts.join("\n"), ...(result.isError === true ? { isError: true } : {}) };
}

/** Providers want an object schema; MCP requires one, but a server may still send less. */
function objectSchema(schema: Record<string, unknown> | undefined): Record<string, unknown> {
  if (!schema || schema.type !== "object") return { type: "object", properties: {} };
  return schema;
}

/** The lifecycle's answer for a call to a tool of a server that is down (its tools were not offered). */
export function mcpMissingToolReason(set: McpToolSet): ((name: string) => string | undefined) | undefined {
  if (set.unavailable.size === 0) return undefined;
  return (name) => {
    const server = serverOfToolName(name, set.unavailable.keys());
    return server ? `the MCP server "${server}" is unavailable for this attempt (${set.unavailable.get(server)})` : undefined;
  };
}
