import { ApiError } from "../../shared/protocol/errors";
import { ToolNameSchema } from "../../shared/protocol/client-tools";
import type { ClientToolDefinition } from "../../shared/openai/request";

/** Client tools of a request, in the runner's terms. */
export interface ToolSpec {
  tools: ClientToolDefinition[];
  choice?: "none" | "auto" | "required" | { name: string };
}

/**
 * The request's function tools as the run's client tools (docs/openai-api.md
 * "Client tools"); none with `tool_choice: "none"`. `required` and a named
 * choice are offered like `auto` (the runner does not force a call). A name a
 * provider would refuse is a 400 here; one that collides with the agent's own
 * tools is a 400 at intake.
 */
export function clientToolsOf(spec: ToolSpec): { name: string; description: string; parameters: Record<string, unknown> }[] | undefined {
  if (spec.tools.length === 0 || spec.choice === "none") return undefined;
  return spec.tools.map((tool, index) => {
    if (!ToolNameSchema.safeParse(tool.name).success) {
      throw new ApiError("INVALID_REQUEST", `tools[${index}]: function names are 1-64 letters, digits, _ or -`, { param: `tools[${index}].function.name` });
    }
    return { name: tool.name, description: tool.description ?? "", parameters: tool.parameters ?? { type: "object", properties: {} } };
  });
}
