import type { ToolsConfig } from "../../config/attempt-config";
import type { Skill } from "../prompt/workspace";
import { calculatorTool } from "./calculator";
import { createCurrentTimeTool } from "./current-time";
import { createCustomHttpTool } from "./custom-http";
import { createHttpFetchTool, publicAddressesOnly, type AddressPolicy } from "./http-fetch";
import { createReadSkillTool } from "./read-skill";
import type { ToolDefinition } from "./types";

export const BUILTIN_TOOLS: readonly ToolDefinition[] = [calculatorTool];

export function toolRegistry(tools: readonly ToolDefinition[] = BUILTIN_TOOLS): Map<string, ToolDefinition> {
  return new Map(tools.map((tool) => [tool.name, tool]));
}

export interface ToolSurfaceInput {
  config: ToolsConfig;
  skills: readonly Skill[];
  now?: () => number;
  /** Tests allow loopback here; production keeps the default SSRF policy. */
  fetchPolicy?: AddressPolicy;
  /** Tools supplied by code (client tools, plugins). */
  extra?: readonly ToolDefinition[];
}

/**
 * The tools one attempt offers: configured built-ins, config-declared custom
 * tools, then tools from code. A later tool with the same name replaces an
 * earlier one, so configuration can override a built-in. read_skill is only
 * offered when there are skills to read.
 */
export function buildToolSurface(input: ToolSurfaceInput): Map<string, ToolDefinition> {
  const tools: ToolDefinition[] = [];
  for (const name of input.config.builtin) {
    if (name === "calculator") tools.push(calculatorTool);
    else if (name === "current_time") tools.push(createCurrentTimeTool(input.now));
    else if (name === "http_fetch") {
      const { maxBytes, timeoutSeconds, maxRedirects } = input.config.httpFetch;
      tools.push(createHttpFetchTool({ maxBytes, timeoutMs: timeoutSeconds * 1000, maxRedirects }, input.fetchPolicy ?? publicAddressesOnly));
    } else if (name === "read_skill" && input.skills.length > 0) tools.push(createReadSkillTool(input.skills));
  }
  tools.push(...input.config.custom.map(createCustomHttpTool), ...(input.extra ?? []));
  return toolRegistry(tools);
}

/** before_prompt_build's `toolsAllow`: keep only the named tools. */
export function narrowTools(tools: ReadonlyMap<string, ToolDefinition>, allow: readonly string[] | undefined): Map<string, ToolDefinition> {
  if (!allow) return new Map(tools);
  return new Map([...tools].filter(([name]) => allow.includes(name)));
}
