/**
 * What the outer loop tells users when it gives up (our own wording; the
 * intent follows reference §3.2), and the few provider messages it must
 * recognise by text because providers give them no code of their own.
 */
export const USER_ERRORS = {
  retryLimit: "The request failed after repeated internal retries. Please try again, or send /new to start a fresh session.",
  retryLimitDetail: (n: number, max: number) => `Exceeded retry limit after ${n} attempts (max=${max}).`,
  idleBreakerDetail: (n: number, cap: number) =>
    `Idle-timeout breaker tripped: ${n} consecutive idle timeouts without completed model progress (cap=${cap}); no further paid model calls.`,
  incompleteTurn: "⚠️ The agent could not produce a response. Please try again.",
  incompleteTurnAfterTools: "⚠️ The agent could not produce a response. Some tool actions may already have run; please check before retrying.",
  contextOverflow: "The conversation is too large for the model, even after compacting it. Send /new to start a fresh session, or use a model with a larger context window.",
  compactionFailure: "The conversation could not be compacted to fit the model. Send /new to start a fresh session, or use a model with a larger context window.",
  roleOrdering: "The conversation history has a message-ordering conflict. Please try again; if it persists, send /new to start a fresh session.",
  imageSize: (maxMb?: string) =>
    `The image is too large for the model${maxMb ? ` (max ${maxMb} MB)` : ""}. Please compress or resize it and try again.`,
  compactionLoop: (tool: string, n: number, window: number) =>
    `The agent kept calling ${tool} with the same arguments and getting the same result (${n} times within ${window} calls) right after its context was compacted. The run was stopped to avoid wasting resources.`,
  aborted: "The run was aborted.",
  rateLimited: "The AI service is rate-limiting requests right now. Please try again in a moment.",
  overloaded: "The AI service is overloaded right now. Please try again in a moment.",
} as const;

/**
 * Role-ordering rejections. Real messages:
 * - Anthropic 400: "messages: roles must alternate between \"user\" and \"assistant\", but found multiple \"user\" roles in a row"
 * - Gemini/OpenAI-compatible 400: "Please ensure that multiturn requests alternate between user and model." /
 *   "Invalid request: incorrect role information"
 */
const ROLE_ORDERING = /incorrect role information|roles must alternate|must alternate between/i;

/** Anthropic 400: "messages.0.content.1.image.source.base64: image exceeds 5 MB maximum: 7340032 bytes > 5242880 bytes" */
const IMAGE_TOO_LARGE = /image exceeds\s+(\d+(?:\.\d+)?)\s*mb/i;

/**
 * Rate limits whose window is days, not seconds: a same-model retry within a
 * minute cannot succeed (reference §G.68). Real messages:
 * - OpenAI 429: "Rate limit reached for gpt-4o-mini in organization org-x on requests per day (RPD): Limit 200, Used 200, Requested 1."
 * - Anthropic 429: "Your organization has reached its weekly limit." / "You have reached your monthly usage limit."
 */
const LONG_WINDOW = /per day|\(RPD\)|\(TPD\)|daily|weekly|per week|monthly|per month|quota|subscription/i;

export function isLongWindowRateLimit(message: string): boolean {
  return LONG_WINDOW.test(message);
}

export function isRoleOrderingError(message: string): boolean {
  return ROLE_ORDERING.test(message);
}

/** The provider's stated maximum in MB when the message is an image-size rejection, "" when none is stated. */
export function imageSizeLimitMb(message: string): string | undefined {
  const match = IMAGE_TOO_LARGE.exec(message);
  if (match) return match[1];
  return /image exceeds/i.test(message) && /\bmb\b/i.test(message) ? "" : undefined;
}
