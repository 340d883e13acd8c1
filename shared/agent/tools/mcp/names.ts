/**
 * Names the model sees for MCP tools: `<server>__<tool>`, so they never
 * collide with built-in, custom, plugin or other servers' tools. Providers
 * accept `[A-Za-z0-9_-]{1,64}`: other characters become `_` and a long name
 * is cut and given a short hash, so the mapping stays one-to-one.
 */
export const MCP_NAME_SEPARATOR = "__";
const MAX_TOOL_NAME = 64;

export function mcpToolName(server: string, tool: string): string {
  const full = `${server}${MCP_NAME_SEPARATOR}${tool.replace(/[^A-Za-z0-9_-]/g, "_")}`;
  if (full.length <= MAX_TOOL_NAME && full.endsWith(tool)) return full;
  const hash = fnv1a(tool).toString(36).slice(0, 6);
  return `${full.slice(0, MAX_TOOL_NAME - hash.length - 1)}_${hash}`;
}

/** The server a prefixed name belongs to, if any of `servers`. */
export function serverOfToolName(name: string, servers: Iterable<string>): string | undefined {
  for (const server of servers) if (name.startsWith(`${server}${MCP_NAME_SEPARATOR}`)) return server;
  return undefined;
}

/** toolsAllow: exact names, or a trailing `*` for a prefix. */
export function allowedByList(tool: string, allow: readonly string[] | undefined): boolean {
  if (!allow) return true;
  return allow.some((pattern) => (pattern.endsWith("*") ? tool.startsWith(pattern.slice(0, -1)) : tool === pattern));
}

function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}
