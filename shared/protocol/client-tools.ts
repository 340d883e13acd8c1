/**
 * Client tools (issue 12): tools the caller defines on its `agent` request
 * and runs itself. The model is offered them; a call pauses the run until the
 * client answers with the result (REST `POST /v1/runs/{runId}/tool-results`,
 * WebSocket `tools.result`) or `clientToolTimeoutSeconds` passes
 * (docs/client-tools.md). This module holds the wire shapes; pure.
 */
import * as z from "zod";
import { DEFAULT_CLIENT_TOOL_TIMEOUT_SECONDS } from "../core/external-input";

/** The names providers accept for functions (OpenAI and Anthropic agree on this set). */
export const ToolNameSchema = z.lazy(() => z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "tool names are 1-64 letters, digits, _ or -"));

export const MAX_CLIENT_TOOLS = 64;
/** The definitions live on the run record (DynamoDB items are at most 400 KB). */
export const MAX_CLIENT_TOOLS_BYTES = 64 * 1024;
/** A result is a tool result in the transcript; the attempt caps it further (`agent.maxToolResultChars`). */
export const MAX_CLIENT_TOOL_RESULT_BYTES = 256 * 1024;
export const MAX_CLIENT_TOOL_TIMEOUT_SECONDS = 86_400;

export const ClientToolSchema = z.lazy(() => z
  .object({
    name: ToolNameSchema,
    description: z.string().max(4096).default(""),
    /** JSON Schema of the arguments (an object schema). */
    parameters: z.record(z.string(), z.unknown()).default({ type: "object", properties: {} }),
  })
  .strict());
export type ClientTool = z.infer<typeof ClientToolSchema>;

export const ClientToolsSchema = z.lazy(() => z
  .array(ClientToolSchema)
  .min(1)
  .max(MAX_CLIENT_TOOLS)
  .refine((tools) => new Set(tools.map((t) => t.name)).size === tools.length, { message: "clientTools names must be unique" })
  .refine((tools) => Buffer.byteLength(JSON.stringify(tools), "utf8") <= MAX_CLIENT_TOOLS_BYTES, {
    message: `clientTools exceed ${MAX_CLIENT_TOOLS_BYTES} bytes`,
    params: { code: "PAYLOAD_TOO_LARGE" },
  }));

export const ClientToolTimeoutSchema = z.lazy(() => z.number().int().min(1).max(MAX_CLIENT_TOOL_TIMEOUT_SECONDS));
export { DEFAULT_CLIENT_TOOL_TIMEOUT_SECONDS };

/** A result is text for the model; any other JSON value is sent as its JSON text (resultText). */
const ResultSchema = z.lazy(() => z
  .json()
  .refine((value) => Buffer.byteLength(resultText(value), "utf8") <= MAX_CLIENT_TOOL_RESULT_BYTES, {
    message: `result exceeds ${MAX_CLIENT_TOOL_RESULT_BYTES} bytes`,
    params: { code: "PAYLOAD_TOO_LARGE" },
  }));

export function resultText(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** REST body of `POST /v1/runs/{runId}/tool-results`. */
export const ToolResultBodySchema = z.lazy(() => z
  .object({ toolCallId: z.string().min(1).max(256), result: ResultSchema, isError: z.boolean().optional() })
  .strict());

/** WebSocket `tools.result` params: the REST body plus the run. */
export const ToolResultParamsSchema = z.lazy(() => ToolResultBodySchema.unwrap().extend({ runId: z.string().min(1).max(256) }).strict());
export type ToolResultParams = z.infer<typeof ToolResultParamsSchema>;

/** The `tool` event a client tool call sends when the run pauses for it. */
export function clientToolStartData(name: string, toolCallId: string, args: Record<string, unknown>, expiresAt: number) {
  return { phase: "start" as const, name, toolCallId, args, client: true as const, expiresAt };
}
