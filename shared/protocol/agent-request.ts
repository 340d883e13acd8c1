import * as z from "zod";
import { QueueOverridesSchema, TRIGGERS } from "../core/queue-settings";
import { ClientToolsSchema, ClientToolTimeoutSchema } from "./client-tools";

/** SQS caps a message at 256 KiB; a user message never gets near a point where it could not be queued. */
export const MAX_MESSAGE_BYTES = 256 * 1024;

/** Session keys become parts of DynamoDB keys and SQS group ids (<= 128 chars there). */
export const SessionKeySchema = z.lazy(() => z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9:._\-/@+]+$/, "sessionKey may contain letters, digits and : . _ - / @ +"));

export const IdempotencyKeySchema = z.lazy(() => z.string().min(1).max(256));

export const MessageTextSchema = z.lazy(() => z
  .string()
  .min(1, "message must not be empty")
  .refine((text) => Buffer.byteLength(text, "utf8") <= MAX_MESSAGE_BYTES, {
    message: `message exceeds ${MAX_MESSAGE_BYTES} bytes`,
    params: { code: "PAYLOAD_TOO_LARGE" },
  }));

/** `POST /v1/agent` and the WebSocket `agent` method share this core. */
export const AgentRequestSchema = z.lazy(() => z
  .object({
    sessionKey: SessionKeySchema,
    message: MessageTextSchema,
    idempotencyKey: IdempotencyKeySchema.optional(),
    /**
     * The sender's id for this message (a channel's message id, a client's
     * outbox id): a resend with the same id and routing (channel, session) is
     * the same message, answered `duplicate` (OpenClaw's queue dedupe). An
     * `idempotencyKey` takes precedence.
     */
    messageId: z.string().min(1).max(256).optional(),
    /** `provider/model` override for this run. */
    model: z.string().regex(/^[a-z0-9-]+\/.+$/, "model must be provider/model").optional(),
    /** Whole-run budget in seconds; bounded by the configured run timeout. */
    timeoutSeconds: z.number().int().positive().max(172_800).optional(),
    /** Thinking level for the model (OpenClaw: off|minimal|low|medium|high|xhigh). */
    thinking: z.string().min(1).max(32).optional(),
    /** Appended to the system prompt for this run only. */
    extraSystemPrompt: z.string().max(32_000).optional(),
    /** Send the model's reasoning as `thinking` events (off unless asked). */
    streamThinking: z.boolean().optional(),
    /**
     * What to do if the session already has a run (mode steer|followup|collect|interrupt|reject,
     * debounceMs, cap, drop). `scope: "session"` also stores these settings for the session's
     * later messages (replacing what was stored; `{ scope: "session" }` alone clears it).
     */
    queue: QueueOverridesSchema.unwrap().extend({ scope: z.enum(["request", "session"]).optional() }).strict().optional(),
    /** The channel the message came from; selects `lanes.byChannel.<channel>` settings. */
    channel: z.string().min(1).max(64).optional(),
    /** What started the run: user/manual run before webhook, before cron/heartbeat/memory (lane priority). */
    trigger: z.enum(TRIGGERS).optional(),
    /** Tools the caller runs itself: a call pauses the run until `tool-results` answers (docs/client-tools.md). */
    clientTools: ClientToolsSchema.optional(),
    /** How long a client tool call waits for its result (default 300 s): then `Client tool timed out`. */
    clientToolTimeoutSeconds: ClientToolTimeoutSchema.optional(),
  })
  .strict());
export type AgentRequest = z.infer<typeof AgentRequestSchema>;

export const WaitRequestSchema = z.lazy(() => z.object({ timeoutMs: z.number().int().min(0).optional() }).strict());

/** True when a zod error is only about size, which maps to 413 rather than 400. */
export function isTooLarge(error: z.ZodError): boolean {
  return error.issues.some((issue) => (issue as { params?: { code?: string } }).params?.code === "PAYLOAD_TOO_LARGE");
}
