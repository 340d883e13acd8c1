import { START_EVENTS } from "./history-budget";
import * as z from "zod";
import { FAILURE_KINDS, ProviderFailureSchema, THINKING_LEVELS, type FailureKind, type ThinkingLevel } from "./failures";

export { THINKING_LEVELS, type ThinkingLevel } from "./failures";

/**
 * The outer loop's state as it travels through Step Functions: counters and
 * pointers only (the 256 KB state limit), versioned because executions outlive
 * deployments. Fields added after v1 shipped carry defaults, so a v1 state
 * written by an older deployment still parses (test/core/decide.test.ts
 * parses a frozen v1 state).
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
  overflowCompactions: 3,
  timeoutCompactions: 2,
  /** Timeout compaction only when the last prompt used more than this share of the window. */
  timeoutCompactionPromptShare: 0.65,
  compactionContinuations: 1,
  /** `auth.cooldowns.rateLimitedProfileRotations` / `overloadedProfileRotations`. */
  rateLimitProfileRotations: 1,
  overloadProfileRotations: 1,
  /** The reply runner's full-chain retry when every candidate was only overloaded. */
  overloadChainRetries: 10,
  overloadChainBackoffMs: 2500,
  overloadChainMaxBackoffMs: 30_000,
  postCompactionGuardWindow: 3,
  /** A provider's role-ordering rejection: rebuild the history with strict alternation and retry, once. */
  roleOrderingRepairs: 1,
  /** Loop iterations one Step Functions execution runs before continuing as new (25,000-event history cap). */
  iterationsPerExecution: 1500,
} as const;

const count = () => z.number().int().min(0);
const countSince1 = () => z.number().int().min(0).default(0);

const CountersSchema = z.lazy(() => z.object({
  rateLimitRetries: count(),
  silentErrorRetries: count(),
  idleTimeoutRetries: count(),
  consecutiveIdleTimeouts: count(),
  emptyResponseRetries: count(),
  reasoningOnlyRetries: count(),
  missingAssistantRetries: count(),
  overflowCompactions: countSince1(),
  timeoutCompactions: countSince1(),
  compactionContinuations: countSince1(),
  rateLimitRotations: countSince1(),
  overloadRotations: countSince1(),
  overloadChainRetries: countSince1(),
  thinkingDowngrades: countSince1(),
  /** Compactions whose summary could not be written (the give-up then says compaction_failure). */
  compactionFailures: countSince1(),
  roleOrderingRepairs: countSince1(),
}));
export type LoopCounters = z.infer<typeof CountersSchema>;

export const CONTINUATIONS = ["empty_response", "reasoning_only", "compaction"] as const;
export type Continuation = (typeof CONTINUATIONS)[number];


/** Armed after a compaction: tool outcomes seen since, as `name|argsHash|resultHash` -> count. */
export const PostCompactionGuardSchema = z.lazy(() => z.object({
  remaining: z.number().int().min(0),
  seen: z.record(z.string(), z.number().int().min(1)),
}));
export type PostCompactionGuard = z.infer<typeof PostCompactionGuardSchema>;

/**
 * What a provider's overflow taught about one model of the chain: our token
 * estimate times `tokenScale` is what the provider counts, and its window is
 * at most `contextTokens`. Applied by the precheck, the in-loop guard and the
 * compaction planner for the rest of the run.
 */
export const CalibrationSchema = z.lazy(() => z.object({
  tokenScale: z.number().min(1),
  contextTokens: z.number().int().positive().optional(),
}));
export type Calibration = z.infer<typeof CalibrationSchema>;

const ExecutionSchema = z.lazy(() => z.object({
  /** 0 for the execution StartExecution created, +1 per continue-as-new. */
  generation: z.number().int().min(0),
  /** Loop iterations run by the current execution. */
  iterations: z.number().int().min(0),
  maxIterations: z.number().int().positive(),
  /** History events the current execution has recorded so far, counted by path (core/history-budget.ts). */
  events: z.number().int().min(0).default(0),
  /** The history limit it continues as new before (Step Functions' 25,000 unless configured lower). */
  maxEvents: z.number().int().positive().optional(),
  /** The re-drive whose executions these are (absent: the run's first); continuations are named by it (core/execution-names.ts). */
  redrive: z.number().int().positive().optional(),
}));

// Built on first parse (z.lazy): a function that never reads these pays nothing for them at import (issue 15).
export const LoopStateSchema = z.lazy(() => z.object({
  v: z.literal(1),
  /** Attempts started so far for the current model (every `continue` consumes one; a yield gives it back). */
  iteration: z.number().int().min(0),
  maxIterations: z.number().int().positive(),
  /** Index into [primary model, ...fallbacks]. */
  modelIndex: z.number().int().min(0),
  modelCount: z.number().int().positive(),
  counters: CountersSchema,
  /** Instruction the next attempt appends to its prompt, if any. */
  continuation: z.enum(CONTINUATIONS).optional(),
  lastFailureKind: z.enum(FAILURE_KINDS).optional(),
  /** Auth profiles of each chain model's provider (index = modelIndex); empty = one each. */
  profileCounts: z.array(z.number().int().positive()).default([]),
  /** The profile the current model uses (pinned for the run until it fails over). */
  profileId: z.string().optional(),
  /** Profiles of the current model this run rotated away from. */
  triedProfiles: z.array(z.string()).default([]),
  /**
   * Profiles that failed authentication or billing in this run, with the
   * chain model they failed on: such a failure is about the key, so it covers
   * every model of that provider for the rest of the run (rate-limit and
   * other cooldowns may be per model; the shared health records hold those).
   */
  failedProfiles: z.array(z.object({ profileId: z.string(), modelIndex: z.number().int().min(0), reason: z.enum(FAILURE_KINDS) })).default([]),
  /** A provider rejected the turn order: later attempts send the history in strict user/assistant alternation. */
  strictTurns: z.literal(true).optional(),
  /** Oversized tool results were truncated in the stored transcript (at most once per run). */
  toolResultsTruncated: z.boolean().default(false),
  /** Thinking level the next attempt asks for (undefined = configured default). */
  thinking: z.enum(THINKING_LEVELS).optional(),
  attemptedThinking: z.array(z.enum(THINKING_LEVELS)).default([]),
  /** The attempt that just ran started with a compaction (drives the compaction continuation). */
  compactedBeforeAttempt: z.boolean().default(false),
  guard: PostCompactionGuardSchema.optional(),
  /** Attempts started in the whole run, never reset (attempt records are keyed by it). */
  attempt: countSince1(),
  /** Attempts that stopped early to stay inside the Lambda limit (they do not count against the budget). */
  yields: countSince1(),
  execution: ExecutionSchema.default({ generation: 0, iterations: 0, maxIterations: LIMITS.iterationsPerExecution, events: 0 }),
  /** Per chain model (key = modelIndex): what its provider's overflow errors reported. */
  calibration: z.record(z.string(), CalibrationSchema).default({}),
  /** The deployed configuration version the run started under (tasks load that configuration, not a newer deploy's). */
  configVersion: z.string().optional(),
}));
export type LoopState = z.infer<typeof LoopStateSchema>;

export function maxRunLoopIterations(profileCandidates: number): number {
  const raw = LIMITS.baseIterations + Math.max(1, profileCandidates) * LIMITS.perProfileIterations;
  return Math.min(LIMITS.maxIterations, Math.max(LIMITS.minIterations, raw));
}

export const ZERO_COUNTERS: Readonly<LoopCounters> = Object.freeze({
  rateLimitRetries: 0,
  silentErrorRetries: 0,
  idleTimeoutRetries: 0,
  consecutiveIdleTimeouts: 0,
  emptyResponseRetries: 0,
  reasoningOnlyRetries: 0,
  missingAssistantRetries: 0,
  overflowCompactions: 0,
  timeoutCompactions: 0,
  compactionContinuations: 0,
  rateLimitRotations: 0,
  overloadRotations: 0,
  overloadChainRetries: 0,
  thinkingDowngrades: 0,
  compactionFailures: 0,
  roleOrderingRepairs: 0,
});

export interface LoopShape {
  /** Auth profiles per chain model; its length is the chain length. */
  profileCounts?: number[];
  iterationsPerExecution?: number;
  /** History events one execution may record (default HISTORY_EVENT_LIMIT). */
  maxHistoryEvents?: number;
  thinking?: ThinkingLevel;
  configVersion?: string;
  /** The run's re-drive generation when this loop starts (0 or absent: its first execution). */
  redrive?: number;
}

export function initialLoopState(modelCount: number, shape: LoopShape = {}): LoopState {
  const profileCounts = shape.profileCounts ?? [];
  return {
    v: 1,
    iteration: 0,
    maxIterations: maxRunLoopIterations(profileCounts[0] ?? 1),
    modelIndex: 0,
    modelCount: Math.max(1, modelCount),
    counters: { ...ZERO_COUNTERS },
    profileCounts,
    triedProfiles: [],
    failedProfiles: [],
    toolResultsTruncated: false,
    ...(shape.thinking ? { thinking: shape.thinking } : {}),
    attemptedThinking: [],
    compactedBeforeAttempt: false,
    attempt: 0,
    yields: 0,
    execution: {
      generation: 0,
      iterations: 0,
      maxIterations: shape.iterationsPerExecution ?? LIMITS.iterationsPerExecution,
      events: START_EVENTS,
      ...(shape.maxHistoryEvents ? { maxEvents: shape.maxHistoryEvents } : {}),
      ...(shape.redrive ? { redrive: shape.redrive } : {}),
    },
    calibration: {},
    ...(shape.configVersion ? { configVersion: shape.configVersion } : {}),
  };
}

/** Auth profiles the model at `index` can rotate through (1 when unknown). */
export function profileCountAt(loop: LoopState, index = loop.modelIndex): number {
  return loop.profileCounts[index] ?? 1;
}

/**
 * Counters that belong to one model: a fallback is a fresh run on the next
 * candidate (OpenClaw calls the runner again), so they start afresh. The idle
 * breaker and the full-chain overload retries span the whole run.
 */
export function resetSameModelCounters(counters: LoopCounters): LoopCounters {
  return {
    ...ZERO_COUNTERS,
    consecutiveIdleTimeouts: counters.consecutiveIdleTimeouts,
    overloadChainRetries: counters.overloadChainRetries,
  };
}

export const PRECHECK_RECOVERY_ROUTES = ["compact_only", "truncate_tool_results_only", "compact_then_truncate"] as const;

/** What one attempt reports back to the outer loop (small: it goes through Step Functions state). */
// Built on first parse (z.lazy): a function that never reads these pays nothing for them at import (issue 15).
export const AttemptOutcomeSchema = z.lazy(() => z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("completed") }),
  /** Stopped before the Lambda deadline with the transcript consistent; continue in a fresh attempt. */
  z.object({ kind: z.literal("yielded") }),
  /** `hadSideEffects`: a mutating tool ran in the attempt, so a replay-type retry must not run. */
  z.object({ kind: z.literal("empty_response"), hadSideEffects: z.boolean().optional() }),
  z.object({ kind: z.literal("reasoning_only"), hadSideEffects: z.boolean().optional() }),
  /** The model call ended without any assistant message and nothing happened: resubmit once. */
  z.object({ kind: z.literal("missing_assistant"), hadSideEffects: z.boolean().optional() }),
  z.object({ kind: z.literal("aborted") }),
  /**
   * A tool call waits for an answer from outside (an approval, a client
   * tool): the turn is saved in the ledger, not committed; the state machine
   * waits on a task token and the next attempt finishes the call.
   */
  z.object({ kind: z.literal("paused"), inputId: z.string(), timeoutSeconds: z.number().int().positive() }),
  /**
   * The precheck found the prompt too large before anything was sent. The
   * attempt computed the route; the outer loop executes it (compaction and/or
   * truncation of oversized tool results) and starts a fresh attempt.
   */
  z.object({
    kind: z.literal("context_precheck"),
    route: z.enum(PRECHECK_RECOVERY_ROUTES),
    estimatedTokens: z.number(),
    promptBudgetTokens: z.number(),
    overflowTokens: z.number(),
    /** Cap the truncation routes should cut tool results to. */
    toolResultMaxChars: z.number().int().positive(),
  }),
  /** A token or cost budget of the run or of the session is used up: the loop must stop. */
  z.object({
    kind: z.literal("budget_exceeded"),
    scope: z.enum(["run", "session"]),
    limit: z.enum(["tokens", "cost"]),
    spent: z.number(),
    max: z.number(),
  }),
  /**
   * The compaction (or truncation) the loop asked for could not shrink the
   * context: `compaction` = the summary could not be written; `truncation` =
   * no stored tool result was large enough to cut.
   */
  z.object({ kind: z.literal("compaction_failed"), reason: z.string(), stage: z.enum(["compaction", "truncation"]).optional() }),
  /** The post-compaction loop guard saw the same tool call and result repeat: the run must stop. */
  z.object({ kind: z.literal("compaction_loop"), toolName: z.string(), repeats: z.number().int().positive() }),
  z.object({
    kind: z.literal("failed"),
    failure: ProviderFailureSchema.unwrap().omit({ status: true }),
    /** Whether the model completed any turn in this attempt (the idle breaker's notion of progress). */
    completedModelProgress: z.boolean(),
    /** Prompt-side tokens of the last model call (provider-reported, else estimated); timeout compaction reads it. */
    promptTokens: z.number().int().min(0).optional(),
    /** Our own estimate of the prompt the failed call sent (what an overflow's reported count is compared with). */
    estimatedPromptTokens: z.number().int().min(0).optional(),
    /** Context window of the model that ran. */
    contextTokens: z.number().int().positive().optional(),
  }),
]));
export type AttemptOutcome = z.infer<typeof AttemptOutcomeSchema>;

export const FinalStatusSchema = z.lazy(() => z.enum(["ok", "error", "timeout", "aborted"]));
export const LIVENESS_STATES = ["working", "blocked", "paused", "abandoned"] as const;
export const COMPACTION_TRIGGERS = ["overflow", "timeout", "precheck"] as const;
export type CompactionTrigger = (typeof COMPACTION_TRIGGERS)[number];

// Built on first parse (z.lazy): a function that never reads these pays nothing for them at import (issue 15).
export const DecisionSchema = z.lazy(() => z.discriminatedUnion("action", [
  /** `reason` names the branch (rotate_profile, fallback_model, silent_retry, ...) for traces and tests. */
  z.object({ action: z.literal("attempt"), reason: z.string().optional() }),
  z.object({ action: z.literal("wait"), waitSeconds: z.number().int().positive(), reason: z.string().optional() }),
  /** Summarise older history (sized for the model that runs next), then attempt. */
  z.object({
    action: z.literal("compact"),
    trigger: z.enum(COMPACTION_TRIGGERS),
    /** Then also truncate oversized tool results (precheck route compact_then_truncate). */
    thenTruncate: z.boolean(),
    /** Tokens the failed prompt had: the provider's count, else the precheck estimate, else budget + 1. */
    tokenCount: z.number().int().min(0).optional(),
  }),
  /** Shorten oversized tool results in the stored transcript (head + tail), then attempt. */
  z.object({ action: z.literal("truncate"), maxChars: z.number().int().positive().optional() }),
  /** Wait (no Lambda running) for the external input `inputId`, at most `timeoutSeconds`; then attempt. */
  z.object({ action: z.literal("pause"), inputId: z.string(), timeoutSeconds: z.number().int().positive() }),
  /** The execution's history is nearly full: the run goes on in a fresh execution. */
  z.object({ action: z.literal("continue_as_new"), generation: z.number().int().positive() }),
  z.object({
    action: z.literal("finalize"),
    status: FinalStatusSchema,
    /** Stable reason code for logs, metrics and tests. */
    reason: z.string(),
    /** User-facing error text when status is not ok. */
    error: z.string().optional(),
    /** `meta.error.kind`: retry_limit, context_overflow, compaction_failure, role_ordering, ... */
    errorKind: z.string().optional(),
    livenessState: z.enum(LIVENESS_STATES).optional(),
    /** Internal detail for the logs only (never returned to callers: run meta and events carry `error`). */
    detail: z.string().optional(),
  }),
]));
export type Decision = z.infer<typeof DecisionSchema>;
export type FinalizeDecision = Extract<Decision, { action: "finalize" }>;

/** Side effects a decision asks the step to carry out (never in Step Functions state). */
export type LoopEffect = { type: "profile_failure"; profileId: string; modelIndex: number; reason: FailureKind };

export type FailoverEligible = Extract<
  FailureKind,
  "rate_limit" | "overloaded" | "auth" | "auth_permanent" | "billing" | "model_not_found" | "timeout" | "server_error"
>;
