import { ApiError } from "../../shared/protocol/errors";
import type { ClientToolDefinition } from "../../shared/openai/request";

/** Client tools of a request, in the runner's terms. */
export interface ToolSpec {
  tools: ClientToolDefinition[];
  choice?: "none" | "auto" | "required" | { name: string };
}

/**
 * Client tools need the attempt to end the run when the model calls one
 * (`meta.pendingToolCalls`, mapped to `tool_calls` / `function_call` items
 * by shared/openai/objects.ts). Until the runner offers them, a request that
 * would need them is refused precisely rather than run without its tools.
 */
export function assertToolsSupported(spec: ToolSpec): void {
  if (spec.tools.length === 0 || spec.choice === "none") return;
  throw new ApiError("INVALID_REQUEST", "client-defined tools are not supported by this runner yet; omit `tools` or send tool_choice \"none\"", {
    param: "tools",
    openaiCode: "unsupported_parameter",
  });
}
