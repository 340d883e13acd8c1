import { calculatorTool } from "./calculator";
import type { ToolDefinition } from "./types";

export const BUILTIN_TOOLS: readonly ToolDefinition[] = [calculatorTool];

export function toolRegistry(tools: readonly ToolDefinition[] = BUILTIN_TOOLS): Map<string, ToolDefinition> {
  return new Map(tools.map((tool) => [tool.name, tool]));
}
