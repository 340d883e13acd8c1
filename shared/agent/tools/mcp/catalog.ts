import { createHash } from "node:crypto";
import type { McpServerConfig } from "../../../config/mcp-config";
import { formatError } from "../lifecycle";
import { withMcpClient } from "./connection";

/** One tool as the server lists it (the fields we use of MCP's `Tool`). */
export interface McpListedTool {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  annotations?: { readOnlyHint?: boolean; title?: string };
}

export type McpListing = { ok: true; tools: McpListedTool[]; listedAt: number } | { ok: false; reason: string };

interface CacheEntry {
  tools: McpListedTool[];
  listedAt: number;
}

/**
 * Tool lists per server, kept for the life of a warm function and listed
 * again after `ttlMs`. Keyed by the server's name and its configuration, so
 * a run under another configuration version never sees a stale server's
 * list. A failed listing is not cached: the next attempt tries again.
 */
export class McpCatalog {
  private readonly cache = new Map<string, CacheEntry>();

  constructor(private readonly now: () => number = Date.now) {}

  async list(name: string, server: McpServerConfig, ttlMs: number, signal?: AbortSignal): Promise<McpListing> {
    const key = cacheKey(name, server);
    const cached = this.cache.get(key);
    if (cached && this.now() - cached.listedAt < ttlMs) return { ok: true, ...cached };
    try {
      const tools = await withMcpClient(server, signal, async (client, timeout) => listAll(client, timeout, signal));
      const entry = { tools, listedAt: this.now() };
      this.cache.set(key, entry);
      return { ok: true, ...entry };
    } catch (error) {
      return { ok: false, reason: formatError(error) };
    }
  }

  clear(): void {
    this.cache.clear();
  }
}

type ListingClient = Parameters<Parameters<typeof withMcpClient>[2]>[0];

/** Follows `nextCursor` pages (bounded: a misbehaving server cannot loop us forever). */
async function listAll(client: ListingClient, timeout: number, signal?: AbortSignal): Promise<McpListedTool[]> {
  const tools: McpListedTool[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 20; page += 1) {
    const result = await client.listTools(cursor ? { cursor } : undefined, { timeout, ...(signal ? { signal } : {}) });
    tools.push(...(result.tools as McpListedTool[]));
    cursor = result.nextCursor;
    if (!cursor) break;
  }
  return tools;
}

/** Secret values are part of the key only as a hash (the key is never logged, but stays small). */
function cacheKey(name: string, server: McpServerConfig): string {
  return `${name}:${createHash("sha256").update(JSON.stringify(server)).digest("hex").slice(0, 16)}`;
}

/** The catalog of this warm function (module state is what a warm Lambda container keeps). */
export const warmCatalog = new McpCatalog();
