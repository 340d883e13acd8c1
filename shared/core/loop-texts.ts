/**
 * What the outer loop tells users when it gives up (our own wording; the
 * intent follows reference §3.2, except the overflow give-up, which is
 * OpenClaw's own text). Provider messages are read by the adapters
 * (providers/failure-details.ts), never here.
 */
const CONTEXT_OVERFLOW =
  "Context overflow: prompt too large for the model. Try /reset (or /new) to start a fresh session, or use a larger-context model.";

const PROVIDER_FAILURE_TEXTS: Record<string, string> = {
  auth: "The AI service rejected the configured credentials. Check the provider key.",
  auth_permanent: "The AI service rejected the configured credentials. Check the provider key.",
  billing: "The AI service refused the request for billing reasons (quota or credit). Check the provider account.",
  format: "The AI service rejected the request. Please try again, or send /new to start a fresh session.",
  model_not_found: "The configured model is not available from its provider.",
  timeout: "The AI service did not answer in time. Please try again.",
};

export const USER_ERRORS = {
  retryLimit: "The request failed after repeated internal retries. Please try again, or send /new to start a fresh session.",
  retryLimitDetail: (n: number, max: number) => `Exceeded retry limit after ${n} attempts (max=${max}).`,
  idleBreakerDetail: (n: number, cap: number) =>
    `Idle-timeout breaker tripped: ${n} consecutive idle timeouts without completed model progress (cap=${cap}); no further paid model calls.`,
  incompleteTurn: "⚠️ The agent could not produce a response. Please try again.",
  incompleteTurnAfterTools: "⚠️ The agent could not produce a response. Some tool actions may already have run; please check before retrying.",
  /** OpenClaw's overflow give-up text (run.ts); `error.kind` tells context_overflow from compaction_failure. */
  contextOverflow: CONTEXT_OVERFLOW,
  compactionFailure: CONTEXT_OVERFLOW,
  roleOrdering: "The conversation history has a message-ordering conflict. Please try again; if it persists, send /new to start a fresh session.",
  imageSize: (maxMb?: string) =>
    `The image is too large for the model${maxMb ? ` (max ${maxMb} MB)` : ""}. Please compress or resize it and try again.`,
  compactionLoop: (tool: string, n: number, window: number) =>
    `The agent kept calling ${tool} with the same arguments and getting the same result (${n} times within ${window} calls) right after its context was compacted. The run was stopped to avoid wasting resources.`,
  aborted: "The run was aborted.",
  rateLimited: "The AI service is rate-limiting requests right now. Please try again in a moment.",
  /**
   * A provider failure the loop gives up on, in our words: the provider's own
   * message (key fragments, account and request ids, internal hostnames) stays
   * in the decision's `detail`, which is logged and never returned to callers.
   */
  providerFailure: (kind: string): string => PROVIDER_FAILURE_TEXTS[kind] ?? "The AI service failed to answer. Please try again.",
  overloaded: "The AI service is overloaded right now. Please try again in a moment.",
} as const;
