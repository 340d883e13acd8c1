import { z } from "zod";
import { FAILURE_KINDS, type FailureKind } from "./failures";

/**
 * The outer loop's state as it travels through Step Functions: counters and
 * pointers only (the 256 KB state limit), versioned because executions outlive
 * deployments.
 */
export const LIMITS = {
  /** resolveMaxRunRetryIterations: clamp(BASE + max(1, profiles) * PER_PROFILE, MIN, MAX). */
  baseIterations: 24,
  perProfileIterations: 8,
  minIterations: 32,
  maxIterations: 160,
  sameModelRateLimitRetries: 3,
  rateLimitStepSeconds: 10,
  maxRetryAfterSeconds: 60,
  silentErrorRetries: 3,
  sameModelIdleTimeoutRetries: 1,
  consecutiveIdleTimeoutsBeforeBreak: 5,
  emptyResponseRetries: 1,
  reasoningOnlyRetries: 2,
  missingAssistantRetries: 1,
} as const;

const CountersSchema = z.object({
  rateLimitRetries: z.number().int().min(0),
  silentErrorRetries: z.number().int().min(0),
  idleTimeoutRetries: z.number().int().min(0),
  consecutiveIdleTimeouts: z.number().int().min(0),
  emptyResponseRetries: z.number().int().min(0),
  reasoningOnlyRetries: z.number().int().min(0),
  missingAssistantRetries: z.number().int().min(0),
});
export type LoopCounters = z.infer<typeof CountersSchema>;

export const CONTINUATIONS = ["empty_response", "reasoning_only"] as const;
export type Continuation = (typeof CONTINUATIONS)[number];

export const LoopStateSchema = z.object({
  v: z.literal(1),
  /** Attempts started so far (every `continue` consumes one). */
  iteration: z.number().int().min(0),
  maxIterations: z.number().int().positive(),
  /** Index into [primary model, ...fallbacks]. */
  modelIndex: z.number().int().min(0),
  modelCount: z.number().int().positive(),
  counters: CountersSchema,
  /** Instruction the next attempt appends to its prompt, if any. */
  continuation: z.enum(CONTINUATIONS).optional(),
  lastFailureKind: z.enum(FAILURE_KINDS).optional(),
});
export type LoopState = z.infer<typeof LoopStateSchema>;

export function maxRunLoopIterations(profileCandidates: number): number {
  const raw = LIMITS.baseIterations + Math.max(1, profileCandidates) * LIMITS.perProfileIterations;
  return Math.min(LIMITS.maxIterations, Math.max(LIMITS.minIterations, raw));
}

const ZERO_COUNTERS: LoopCounters = {
  rateLimitRetries: 0,
  silentErrorRetries: 0,
  idleTimeoutRetries: 0,
  consecutiveIdleTimeouts: 0,
  emptyResponseRetries: 0,
  reasoningOnlyRetries: 0,
  missingAssistantRetries: 0,
};

export function initialLoopState(modelCount: number, profileCandidates = 1): LoopState {
  return {
    v: 1,
    iteration: 0,
    maxIterations: maxRunLoopIterations(profileCandidates),
    modelIndex: 0,
    modelCount: Math.max(1, modelCount),
    counters: { ...ZERO_COUNTERS },
  };
}

/** Counters that belong to one model: a fallback starts them afresh (the idle breaker does not). */
export function resetSameModelCounters(counters: LoopCounters): LoopCounters {
  return { ...ZERO_COUNTERS, consecutiveIdleTimeouts: counters.consecutiveIdleTimeouts };
}

/** What one attempt reports back to the outer loop (small: it goes through Step Functions state). */
export const AttemptOutcomeSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("completed") }),
  /** Stopped before the Lambda deadline with the transcript consistent; continue in a fresh attempt. */
  z.object({ kind: z.literal("yielded") }),
  z.object({ kind: z.literal("empty_response") }),
  z.object({ kind: z.literal("reasoning_only") }),
  z.object({ kind: z.literal("aborted") }),
  z.object({
    kind: z.literal("failed"),
    failure: z.object({
      kind: z.enum(FAILURE_KINDS),
      message: z.string(),
      retryable: z.boolean(),
      retryAfterMs: z.number().optional(),
      rateLimitWindow: z.enum(["short", "long"]).optional(),
      responseStarted: z.boolean(),
    }),
    /** Whether the model completed any turn in this attempt (the idle breaker's notion of progress). */
    completedModelProgress: z.boolean(),
  }),
]);
export type AttemptOutcome = z.infer<typeof AttemptOutcomeSchema>;

export const FinalStatusSchema = z.enum(["ok", "error", "timeout", "aborted"]);

export const DecisionSchema = z.discriminatedUnion("action", [
  z.object({ action: z.literal("attempt") }),
  z.object({ action: z.literal("wait"), waitSeconds: z.number().int().positive() }),
  z.object({
    action: z.literal("finalize"),
    status: FinalStatusSchema,
    /** Stable reason code for logs, metrics and tests. */
    reason: z.string(),
    /** User-facing error text when status is not ok. */
    error: z.string().optional(),
  }),
]);
export type Decision = z.infer<typeof DecisionSchema>;

export type FailoverEligible = Extract<
  FailureKind,
  "rate_limit" | "overloaded" | "auth" | "auth_permanent" | "billing" | "model_not_found" | "timeout" | "server_error"
>;
