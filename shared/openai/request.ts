/**
 * The OpenAI request bodies this API accepts (the subset OpenClaw's gateway
 * reads, plus client tools). Unknown OpenAI parameters (temperature, top_p,
 * …) are accepted and ignored, as OpenClaw does: the agent's configuration
 * decides how the model is called. What we read is validated precisely.
 */
import * as z from "zod";

const TextPartSchema = z.lazy(() => z.object({ type: z.enum(["text", "input_text", "output_text"]), text: z.string() }).loose());
/** Images and other parts are accepted and not forwarded (the runner takes text messages). */
const OtherPartSchema = z.lazy(() => z.object({ type: z.string() }).loose());
// A union built inside each schema's z.lazy, not a z.lazy itself: zod's JSON Schema of `.nullish()` around a z.lazy drops the null (docs/openapi.json).
const content = () => z.union([z.string(), z.array(z.union([TextPartSchema, OtherPartSchema]))]);

export const FunctionToolSchema = z.lazy(() => z
  .object({
    type: z.literal("function"),
    function: z.object({
      name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "tool names are 1-64 letters, digits, _ or -"),
      description: z.string().max(8_000).optional(),
      parameters: z.record(z.string(), z.unknown()).optional(),
      strict: z.boolean().nullish(),
    }),
  })
  .loose());

const ToolCallSchema = z.lazy(() => z
  .object({ id: z.string().min(1), type: z.literal("function"), function: z.object({ name: z.string(), arguments: z.string() }) })
  .loose());

export const ChatMessageSchema = z.lazy(() => z.discriminatedUnion("role", [
  z.object({ role: z.literal("system"), content: content(), name: z.string().optional() }).loose(),
  z.object({ role: z.literal("developer"), content: content(), name: z.string().optional() }).loose(),
  z.object({ role: z.literal("user"), content: content(), name: z.string().optional() }).loose(),
  z
    .object({ role: z.literal("assistant"), content: content().nullish(), tool_calls: z.array(ToolCallSchema).optional(), name: z.string().optional() })
    .loose(),
  z.object({ role: z.literal("tool"), content: content(), tool_call_id: z.string().min(1) }).loose(),
  z.object({ role: z.literal("function"), content: content().nullish(), name: z.string() }).loose(),
]));
export type ChatMessage = z.infer<typeof ChatMessageSchema>;

const ToolChoiceSchema = z.lazy(() => z.union([
  z.enum(["none", "auto", "required"]),
  z.object({ type: z.literal("function"), function: z.object({ name: z.string() }) }).loose(),
]));

/** `user` is at most 256 characters in OpenAI's API; it selects a stable session. */
const UserSchema = z.lazy(() => z.string().min(1).max(256));

export const ChatCompletionRequestSchema = z.lazy(() => z
  .object({
    model: z.string().min(1).max(256),
    messages: z.array(ChatMessageSchema).min(1, "messages must not be empty"),
    stream: z.boolean().nullish(),
    stream_options: z.object({ include_usage: z.boolean().optional() }).loose().nullish(),
    user: UserSchema.optional(),
    tools: z.array(FunctionToolSchema).max(128).optional(),
    tool_choice: ToolChoiceSchema.optional(),
  })
  .loose());
export type ChatCompletionRequest = z.infer<typeof ChatCompletionRequestSchema>;

const ResponsesFunctionToolSchema = z.lazy(() => z
  .object({
    type: z.literal("function"),
    name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "tool names are 1-64 letters, digits, _ or -"),
    description: z.string().max(8_000).nullish(),
    parameters: z.record(z.string(), z.unknown()).nullish(),
    strict: z.boolean().nullish(),
  })
  .loose());

const ResponsesInputItemSchema = z.lazy(() => z.union([
  z
    .object({ type: z.literal("message").optional(), role: z.enum(["user", "assistant", "system", "developer"]), content: content() })
    .loose(),
  z.object({ type: z.literal("function_call_output"), call_id: z.string().min(1), output: z.union([z.string(), z.array(z.unknown())]) }).loose(),
  z.object({ type: z.literal("function_call"), call_id: z.string().min(1), name: z.string(), arguments: z.string() }).loose(),
  z.object({ type: z.string() }).loose(),
]));
export type ResponsesInputItem = z.infer<typeof ResponsesInputItemSchema>;

export const ResponsesRequestSchema = z.lazy(() => z
  .object({
    model: z.string().min(1).max(256),
    input: z.union([z.string().min(1), z.array(ResponsesInputItemSchema).min(1)]),
    instructions: z.string().nullish(),
    stream: z.boolean().nullish(),
    user: UserSchema.optional(),
    tools: z.array(z.union([ResponsesFunctionToolSchema, z.object({ type: z.string() }).loose()])).max(128).optional(),
    tool_choice: z.union([z.enum(["none", "auto", "required"]), z.object({ type: z.literal("function"), name: z.string() }).loose()]).optional(),
    max_output_tokens: z.number().int().positive().nullish(),
    /** Continues the session of that response's run (OpenAI's conversation chaining). */
    previous_response_id: z.string().min(1).max(128).nullish(),
  })
  .loose());
export type ResponsesRequest = z.infer<typeof ResponsesRequestSchema>;

/** A client tool in the runner's terms: what the model sees; the caller runs it. */
export interface ClientToolDefinition {
  name: string;
  description?: string;
  parameters: Record<string, unknown>;
}
