import { capText } from "../../core/truncate";
import type { ToolCallBlock, ToolResultMessage } from "../../core/messages";
import type { ToolContext, ToolDefinition } from "./types";

/**
 * One lifecycle for every tool call: resolve, run, turn any failure into an
 * `isError` result the model can read (never an exception), and cap the
 * result before it is stored or streamed.
 */
export async function executeToolCall(
  tools: ReadonlyMap<string, ToolDefinition>,
  call: ToolCallBlock,
  context: ToolContext,
  maxResultChars: number,
): Promise<ToolResultMessage> {
  const tool = tools.get(call.name.trim());
  const base = { role: "tool_result" as const, toolCallId: call.id, toolName: call.name };
  if (!tool) return { ...base, content: `Tool "${call.name}" is not available.`, isError: true };
  try {
    const output = await tool.execute(call.args, context);
    return { ...base, content: capText(output.content, maxResultChars).text, isError: output.isError ?? false };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { ...base, content: capText(`Error: ${message}`, maxResultChars).text, isError: true };
  }
}
