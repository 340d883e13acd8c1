import type { FailureKind } from "./failures";
import { armGuard } from "./loop-guard";
import {
  LIMITS,
  maxRunLoopIterations,
  profileCountAt,
  resetSameModelCounters,
  type CompactionTrigger,
  type Decision,
  type FinalizeDecision,
  type LoopCounters,
  type LoopEffect,
  type LoopState,
} from "./run-loop";

/** One decision of the outer loop: the next state, what to do, and side effects for the step to carry out. */
export interface Step {
  loop: LoopState;
  decision: Decision;
  effects?: LoopEffect[];
}

/** Failures that say something about the credential, so the profile cools down for every run. */
const PROFILE_FAILURE_KINDS: ReadonlySet<FailureKind> = new Set(["rate_limit", "overloaded", "auth", "auth_permanent", "billing", "timeout"]);

export function again(loop: LoopState, reason?: string, effects?: LoopEffect[]): Step {
  return withEffects({ loop, decision: { action: "attempt", ...(reason ? { reason } : {}) } }, effects);
}

export function finalize(loop: LoopState, fields: Omit<FinalizeDecision, "action">, effects?: LoopEffect[]): Step {
  return withEffects({ loop, decision: { action: "finalize", ...fields } }, effects);
}

export function giveUp(loop: LoopState, reason: string, error: string, errorKind: string, extra: { detail?: string; effects?: LoopEffect[] } = {}): Step {
  const fields = { status: "error" as const, reason, error, errorKind, livenessState: "blocked" as const };
  return finalize(loop, extra.detail ? { ...fields, detail: extra.detail } : fields, extra.effects);
}

export function bump(loop: LoopState, counter: keyof LoopCounters, by = 1): LoopState {
  return { ...loop, counters: { ...loop.counters, [counter]: loop.counters[counter] + by } };
}

export function hasFallback(loop: LoopState): boolean {
  return loop.modelIndex + 1 < loop.modelCount;
}

/** Marks the profile the attempt used, when the failure says something about it. */
export function profileFailure(loop: LoopState, kind: FailureKind): LoopEffect[] {
  if (!loop.profileId || !PROFILE_FAILURE_KINDS.has(kind)) return [];
  return [{ type: "profile_failure", profileId: loop.profileId, modelIndex: loop.modelIndex, reason: kind }];
}

/**
 * The next model of the chain: a fresh run on the next candidate (OpenClaw's
 * runWithModelFallback calls the runner again), so its budget, same-model
 * counters, profile choice and thinking level start afresh.
 */
export function nextModel(loop: LoopState, kind: FailureKind | undefined): Step {
  const modelIndex = loop.modelIndex + 1;
  const next: LoopState = {
    ...loop,
    modelIndex,
    iteration: 0,
    maxIterations: maxRunLoopIterations(profileCountAt(loop, modelIndex)),
    counters: resetSameModelCounters(loop.counters),
    profileId: undefined,
    triedProfiles: [],
    toolResultsTruncated: false,
    thinking: undefined,
    attemptedThinking: [],
  };
  return again(next, "fallback_model", kind ? profileFailure(loop, kind) : []);
}

/** A compaction (then an attempt on the compacted transcript), counted against its trigger's cap. */
export function compaction(loop: LoopState, trigger: CompactionTrigger, opts: { thenTruncate?: boolean; tokenCount?: number } = {}): Step {
  const counter = trigger === "timeout" ? "timeoutCompactions" : "overflowCompactions";
  const thenTruncate = Boolean(opts.thenTruncate) && !loop.toolResultsTruncated;
  const next: LoopState = {
    ...bump(loop, counter),
    compactedBeforeAttempt: true,
    guard: armGuard(),
    toolResultsTruncated: loop.toolResultsTruncated || thenTruncate,
    continuation: "compaction",
  };
  const decision: Decision = {
    action: "compact",
    trigger,
    thenTruncate,
    ...(opts.tokenCount !== undefined ? { tokenCount: Math.max(0, Math.round(opts.tokenCount)) } : {}),
  };
  return { loop: next, decision };
}

export function compactionsLeft(loop: LoopState, trigger: CompactionTrigger): boolean {
  return trigger === "timeout"
    ? loop.counters.timeoutCompactions < LIMITS.timeoutCompactions
    : loop.counters.overflowCompactions < LIMITS.overflowCompactions;
}

/** Truncation of oversized tool results in the stored transcript, at most once per run. */
export function truncation(loop: LoopState, maxChars?: number): Step {
  return { loop: { ...loop, toolResultsTruncated: true }, decision: { action: "truncate", ...(maxChars ? { maxChars } : {}) } };
}

function withEffects(step: Step, effects: LoopEffect[] | undefined): Step {
  return effects && effects.length > 0 ? { ...step, effects } : step;
}
