/**
 * Zod schemas of what the REST API answers, for the OpenAPI document. The
 * request schemas are the ones the handlers validate with (imported where
 * they live); these describe the bodies the handlers build.
 */
import { z } from "zod";
import { ERROR_CODES } from "../../shared/protocol/errors";
import { RUN_STATUSES } from "../../shared/aws/runs";
import { EVENT_STREAMS } from "../../shared/aws/event-log";

export const ApiErrorSchema = z
  .object({ error: z.object({ code: z.enum(ERROR_CODES), message: z.string(), details: z.record(z.string(), z.unknown()).optional() }) })
  .meta({ description: "Every REST error (docs/protocol.md, Error codes)." });

export const AcceptedSchema = z.object({
  runId: z.string(),
  status: z.enum(["accepted", "queued", "steered", "collected"]),
  acceptedAt: z.number(),
  sessionKey: z.string(),
  position: z.number().int().optional(),
  intoRunId: z.string().optional(),
  interruptedRunId: z.string().optional(),
  activeRunId: z.string().optional(),
  cached: z.literal(true).optional(),
});

export const WaitResultSchema = z.object({
  runId: z.string(),
  status: z.enum(["ok", "error", "timeout"]),
  startedAt: z.number().optional(),
  endedAt: z.number().optional(),
  error: z.string().optional(),
});

export const RunResultSchema = z.object({ payloads: z.array(z.object({ text: z.string(), isError: z.boolean().optional() })), meta: z.record(z.string(), z.unknown()) });

export const RunViewSchema = WaitResultSchema.extend({
  runStatus: z.enum(RUN_STATUSES),
  sessionKey: z.string(),
  acceptedAt: z.number(),
  model: z.string(),
  lastSeq: z.number().int(),
  result: RunResultSchema.optional(),
});

export const RunEventViewSchema = z.object({
  runId: z.string(),
  sessionKey: z.string(),
  agentId: z.string(),
  seq: z.number().int().min(1),
  stream: z.enum(EVENT_STREAMS),
  ts: z.number(),
  data: z.record(z.string(), z.unknown()),
});

export const RunEventsPageSchema = z.object({
  runId: z.string(),
  runStatus: z.enum(RUN_STATUSES),
  events: z.array(RunEventViewSchema),
  hasMore: z.boolean(),
  nextAfter: z.number().int(),
});

export const AbortOutcomeSchema = z.object({ runId: z.string(), aborted: z.boolean(), status: z.string() });

export const HistorySchema = z.object({
  sessionKey: z.string(),
  sessionId: z.string(),
  messages: z.array(z.object({ seq: z.number().int(), runId: z.string(), ts: z.number(), role: z.string() }).loose()),
});

export const HealthSchema = z.object({ ok: z.literal(true) });

// ------------------------------------------------------------------ OpenAI objects

const ChatUsageSchema = z.object({ prompt_tokens: z.number().int(), completion_tokens: z.number().int(), total_tokens: z.number().int(), prompt_tokens_details: z.object({ cached_tokens: z.number().int() }) });
const ToolCallSchema = z.object({ id: z.string(), type: z.literal("function"), function: z.object({ name: z.string(), arguments: z.string() }) });

export const ChatCompletionSchema = z.object({
  id: z.string().meta({ description: "`chatcmpl-<runId>`" }),
  object: z.literal("chat.completion"),
  created: z.number().int(),
  model: z.string(),
  choices: z.array(
    z.object({
      index: z.number().int(),
      message: z.object({ role: z.literal("assistant"), content: z.string().nullable(), refusal: z.null(), tool_calls: z.array(ToolCallSchema).optional() }),
      logprobs: z.null(),
      finish_reason: z.enum(["stop", "tool_calls"]),
    }),
  ),
  usage: ChatUsageSchema,
});

export const ChatCompletionPendingSchema = z
  .object({ id: z.string(), object: z.literal("chat.completion"), created: z.number().int().optional(), model: z.string(), status: z.literal("in_progress"), choices: z.array(z.unknown()).max(0), run_id: z.string(), location: z.string().optional() })
  .meta({ description: "202: the run goes on; GET the `Location` (relative to the request URL) until it answers 200." });

export const ChatCompletionChunkSchema = z
  .object({ id: z.string(), object: z.literal("chat.completion.chunk"), created: z.number().int(), model: z.string(), choices: z.array(z.object({ index: z.number().int(), delta: z.record(z.string(), z.unknown()), finish_reason: z.string().nullable() })), usage: ChatUsageSchema.nullable().optional() })
  .meta({ description: "One `data:` line of the SSE stream (`stream: true`); the stream ends with `data: [DONE]`." });

export const ResponseObjectSchema = z.object({
  id: z.string().meta({ description: "`resp_<runId>`" }),
  object: z.literal("response"),
  created_at: z.number().int(),
  status: z.enum(["in_progress", "completed", "incomplete", "failed"]),
  model: z.string(),
  output: z.array(z.object({ type: z.enum(["message", "function_call"]), id: z.string() }).loose()),
  output_text: z.string(),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  usage: z.object({ input_tokens: z.number().int(), output_tokens: z.number().int(), total_tokens: z.number().int() }).loose(),
  run_id: z.string(),
}).loose();

export const ModelSchema = z.object({ id: z.string(), object: z.literal("model"), created: z.number().int(), owned_by: z.string() });
export const ModelListSchema = z.object({ object: z.literal("list"), data: z.array(ModelSchema) });
export const OpenAIErrorSchema = z.object({ error: z.object({ message: z.string(), type: z.string(), param: z.string().nullable(), code: z.string().nullable() }) });
