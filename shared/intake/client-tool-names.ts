import type { AgentConfig } from "../config/config";
import { BUILTIN_TOOL_NAMES } from "../config/attempt-config";
import { serverOfToolName } from "../agent/tools/mcp/names";
import { ApiError } from "../protocol/errors";

/**
 * A client tool may not take the name of a tool the deployment offers: a
 * built-in (any of them, configured or not: read_skill appears with skills),
 * a custom tool, a plugin's tool, or a name in an MCP server's namespace
 * (`<server>__*`, listed only at attempt time). Refused at intake (400),
 * never discovered in the middle of a run.
 */
export function refuseClientToolCollisions(
  clientTools: readonly { name: string }[],
  deps: { config: AgentConfig; pluginTools?: readonly { name: string }[] },
): void {
  const taken = new Set<string>([...BUILTIN_TOOL_NAMES, ...deps.config.tools.custom.map((t) => t.name), ...(deps.pluginTools ?? []).map((t) => t.name)]);
  const servers = Object.keys(deps.config.mcp.servers);
  for (const { name } of clientTools) {
    const server = serverOfToolName(name, servers);
    if (taken.has(name) || server) {
      const why = server ? `is in the namespace of the MCP server "${server}"` : "is already a tool of this agent";
      throw new ApiError("INVALID_REQUEST", `client tool "${name}" ${why}; rename it`, { param: "clientTools" });
    }
  }
}
