/**
 * The closed set of failure kinds a provider adapter classifies into. The
 * outer loop decides on these; nothing downstream inspects provider messages.
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

export interface ProviderFailure {
  kind: FailureKind;
  message: string;
  /** HTTP status when the failure came from a response. */
  status?: number;
  /** Whether repeating the same request could succeed. Decided by the adapter. */
  retryable: boolean;
  /** Server-advised delay (Retry-After and friends), only when sane. */
  retryAfterMs?: number;
  /** For rate limits: short windows are worth a same-model retry, long ones are not. */
  rateLimitWindow?: "short" | "long";
  /** Whether any output had been streamed before the failure. */
  responseStarted: boolean;
}
