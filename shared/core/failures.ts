import * as z from "zod";

/**
 * The closed set of failure kinds a provider adapter classifies into. The
 * outer loop decides on these; nothing downstream inspects provider messages:
 * what an adapter could only read from a message's text (the numbers of an
 * overflow, a role-ordering or image-size rejection, the reasoning levels a
 * model accepts, a rate limit's window) it reports as fields.
 */
export const FAILURE_KINDS = [
  "rate_limit",
  "overloaded",
  "auth",
  "auth_permanent",
  "billing",
  "context_overflow",
  "timeout",
  "format",
  "model_not_found",
  "server_error",
  "aborted",
  "unknown",
] as const;

export type FailureKind = (typeof FAILURE_KINDS)[number];

export const THINKING_LEVELS = ["off", "minimal", "low", "medium", "high", "xhigh"] as const;
export type ThinkingLevel = (typeof THINKING_LEVELS)[number];

/** What a provider said about an overflow: its window and what the rejected prompt counted, when it says. */
export const OverflowFactsSchema = z.lazy(() => z.object({
  maxContextTokens: z.number().int().positive().optional(),
  promptTokens: z.number().int().positive().optional(),
}));
export type OverflowFacts = z.infer<typeof OverflowFactsSchema>;

/** Why a `format` failure happened, when the adapter could tell. */
export const FormatCauseSchema = z.lazy(() => z.discriminatedUnion("reason", [
  /** The provider rejected the order of the turns (roles must alternate, tool results must follow their calls). */
  z.object({ reason: z.literal("role_ordering") }),
  /** An image over the provider's size cap; `maxMb` when the message states it. */
  z.object({ reason: z.literal("image_size"), maxMb: z.string().optional() }),
  /** The requested reasoning level was refused; `accepted`: levels to try instead, best first. */
  z.object({ reason: z.literal("thinking_level"), accepted: z.array(z.enum(THINKING_LEVELS)) }),
]));
export type FormatCause = z.infer<typeof FormatCauseSchema>;

export const ProviderFailureSchema = z.lazy(() => z.object({
  kind: z.enum(FAILURE_KINDS),
  message: z.string(),
  /** HTTP status when the failure came from a response. */
  status: z.number().int().optional(),
  /** Whether repeating the same request could succeed. Decided by the adapter. */
  retryable: z.boolean(),
  /** Server-advised delay (Retry-After and friends), only when sane. */
  retryAfterMs: z.number().optional(),
  /** For rate limits: short windows are worth a same-model retry, long ones (days, quotas) are not. */
  rateLimitWindow: z.enum(["short", "long"]).optional(),
  /** Whether any output had been streamed before the failure. */
  responseStarted: z.boolean(),
  /** For context_overflow: the provider's numbers. */
  overflow: OverflowFactsSchema.optional(),
  /** For format: what was wrong with the request. */
  cause: FormatCauseSchema.optional(),
  /**
   * Our own user-facing text for a failure our code decided (the context-window
   * guard), shown as is; a provider's `message` never is (defect 8: safe errors).
   */
  userMessage: z.string().optional(),
}));
export type ProviderFailure = z.infer<typeof ProviderFailureSchema>;
