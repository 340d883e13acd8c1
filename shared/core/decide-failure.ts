import type { FailureKind } from "./failures";
import {
  again,
  bump,
  compaction,
  compactionsLeft,
  finalize,
  giveUp,
  hasFallback,
  nextModel,
  profileFailure,
  truncation,
  type Step,
} from "./decide-steps";
import { USER_ERRORS } from "./loop-texts";
import { calibrate, overflowTokenCount } from "./overflow";
import { LIMITS, maxRunLoopIterations, profileCountAt, resetSameModelCounters, type AttemptOutcome, type LoopState } from "./run-loop";
import { pickFallbackThinkingLevel } from "./thinking";

type Failed = Extract<AttemptOutcome, { kind: "failed" }>;

/** Failure kinds after which another model may succeed where this one cannot (never overflow, format, abort). */
const FAILOVER_KINDS: ReadonlySet<FailureKind> = new Set([
  "rate_limit",
  "overloaded",
  "auth",
  "auth_permanent",
  "billing",
  "model_not_found",
  "timeout",
  "server_error",
  "unknown",
]);

/** Another key of the same provider cannot help with these. */
const NO_ROTATION: ReadonlySet<FailureKind> = new Set(["model_not_found", "context_overflow", "format", "unknown", "aborted"]);

/**
 * A failed attempt. The branches, in order (reference §G, §H):
 * abort -> idle breaker -> per-kind recovery (overflow compaction; timeout
 * compaction / same-model idle retry; short-window rate-limit waits; silent
 * retries; thinking downgrade) -> profile rotation -> model fallback -> give up.
 */
export function decideOnFailure(loop: LoopState, outcome: Failed): Step {
  const { failure } = outcome;
  const tracked: LoopState = { ...rememberKeyFailure(loop, failure.kind), lastFailureKind: failure.kind, counters: trackIdle(loop, outcome) };
  if (failure.kind === "aborted") return finalize(tracked, { status: "aborted", reason: "aborted", error: USER_ERRORS.aborted, livenessState: "abandoned" });
  const idle = tracked.counters.consecutiveIdleTimeouts;
  if (idle >= LIMITS.consecutiveIdleTimeoutsBeforeBreak) {
    // Exits through the retry-limit path; its last reason is a timeout, which never escalates to a fallback.
    return giveUp(tracked, "idle_timeout_breaker", USER_ERRORS.retryLimit, "retry_limit", {
      detail: USER_ERRORS.idleBreakerDetail(idle, LIMITS.consecutiveIdleTimeoutsBeforeBreak),
      effects: profileFailure(tracked, "timeout"),
    });
  }
  switch (failure.kind) {
    case "context_overflow":
      return onOverflow(tracked, outcome);
    case "format":
      return onFormat(tracked, failure);
    case "timeout":
      return onTimeout(tracked, outcome);
    case "rate_limit":
      return onRateLimit(tracked, failure);
    case "overloaded":
      return onOverloaded(tracked, outcome);
    case "server_error":
    case "unknown":
      return onSilentCandidate(tracked, outcome);
    default:
      return failover(tracked, failure.kind, failure.message, failure.userMessage);
  }
}

/** Rotate to another profile, else fall back to the next model, else end with the error. */
export function failover(loop: LoopState, kind: FailureKind, message: string, userMessage?: string): Step {
  if (canRotate(loop, kind)) return rotateProfile(loop, kind);
  if (hasFallback(loop) && FAILOVER_KINDS.has(kind)) return nextModel(loop, kind);
  return giveUp(loop, kind, userMessage ?? surfacedText(kind, message), kind, { detail: message, effects: profileFailure(loop, kind) });
}

/**
 * A provider-reported overflow (reference §G.55, §G.58-59): learn from the
 * provider's numbers (its window; how far our estimate was off), then up to
 * three overflow compactions sized with them, then one truncation of
 * oversized tool results, then give up with OpenClaw's text.
 */
function onOverflow(loop: LoopState, outcome: Failed): Step {
  const calibrated = calibrate(loop, outcome);
  if (compactionsLeft(calibrated, "overflow")) return compaction(calibrated, "overflow", { tokenCount: overflowTokenCount(calibrated, outcome) });
  if (!calibrated.toolResultsTruncated) return truncation(calibrated);
  const failedCompaction = calibrated.counters.compactionFailures > 0;
  return giveUp(
    calibrated,
    "context_overflow",
    failedCompaction ? USER_ERRORS.compactionFailure : USER_ERRORS.contextOverflow,
    failedCompaction ? "compaction_failure" : "context_overflow",
    { detail: outcome.failure.message },
  );
}

function onFormat(loop: LoopState, failure: Failed["failure"]): Step {
  const { cause, message } = failure;
  if (cause?.reason === "thinking_level") {
    const attempted = loop.thinking && !loop.attemptedThinking.includes(loop.thinking) ? [...loop.attemptedThinking, loop.thinking] : loop.attemptedThinking;
    const level = pickFallbackThinkingLevel(cause.accepted, attempted);
    if (level) return again({ ...bump(loop, "thinkingDowngrades"), thinking: level, attemptedThinking: attempted }, "thinking_downgrade");
  }
  if (cause?.reason === "role_ordering" && loop.counters.roleOrderingRepairs < LIMITS.roleOrderingRepairs) {
    // The seeds repair the turn order and retry: strict alternation from now on, whatever the provider.
    return again({ ...bump(loop, "roleOrderingRepairs"), strictTurns: true }, "role_ordering_repair");
  }
  if (cause?.reason === "role_ordering") return giveUp(loop, "role_ordering", USER_ERRORS.roleOrdering, "role_ordering", { detail: message });
  if (cause?.reason === "image_size") return giveUp(loop, "image_size", USER_ERRORS.imageSize(cause.maxMb), "image_size", { detail: message });
  // Terminal: resending the same malformed request cannot succeed, and another model would get it too.
  return giveUp(loop, "format", USER_ERRORS.providerFailure("format"), "format", { detail: message });
}

function onTimeout(loop: LoopState, outcome: Failed): Step {
  const { promptTokens, contextTokens } = outcome;
  const heavyPrompt = promptTokens !== undefined && contextTokens !== undefined && promptTokens / contextTokens > LIMITS.timeoutCompactionPromptShare;
  if (heavyPrompt && compactionsLeft(loop, "timeout")) return compaction(loop, "timeout", { tokenCount: promptTokens });
  const retriesLeft = loop.counters.idleTimeoutRetries < LIMITS.sameModelIdleTimeoutRetries;
  // Same-model idle retry only when nothing else could take over and nothing observable happened.
  if (!hasFallback(loop) && retriesLeft && !outcome.completedModelProgress && !outcome.failure.responseStarted) {
    return again(bump(loop, "idleTimeoutRetries"), "same_model_idle_retry");
  }
  return failover(loop, "timeout", outcome.failure.message);
}

function onRateLimit(loop: LoopState, failure: Failed["failure"]): Step {
  const { rateLimitRetries, rateLimitRotations } = loop.counters;
  const shortWindow = failure.rateLimitWindow !== "long";
  if (shortWindow && rateLimitRetries < LIMITS.sameModelRateLimitRetries && rateLimitRotations < LIMITS.rateLimitProfileRotations) {
    const stepSeconds = LIMITS.rateLimitStepSeconds * (rateLimitRetries + 1);
    const advised = Math.ceil((failure.retryAfterMs ?? 0) / 1000);
    const waitSeconds = Math.min(LIMITS.maxRetryAfterSeconds, Math.max(stepSeconds, advised));
    return { loop: bump(loop, "rateLimitRetries"), decision: { action: "wait", waitSeconds, reason: "same_model_rate_limit" } };
  }
  return failover(loop, "rate_limit", failure.message);
}

function onOverloaded(loop: LoopState, outcome: Failed): Step {
  if (canRotate(loop, "overloaded") || hasFallback(loop)) return failover(loop, "overloaded", outcome.failure.message);
  const nothingStarted = !outcome.failure.responseStarted && !outcome.completedModelProgress;
  const retries = loop.counters.overloadChainRetries;
  if (nothingStarted && retries < LIMITS.overloadChainRetries) return restartChainAfterOverload(loop, retries);
  return failover(loop, "overloaded", outcome.failure.message);
}

/** Every candidate was overloaded: wait (2.5 s doubling to 30 s) and walk the whole chain again. */
function restartChainAfterOverload(loop: LoopState, retries: number): Step {
  const backoffMs = Math.min(LIMITS.overloadChainMaxBackoffMs, LIMITS.overloadChainBackoffMs * 2 ** retries);
  const restarted: LoopState = {
    ...loop,
    modelIndex: 0,
    iteration: 0,
    maxIterations: maxRunLoopIterations(profileCountAt(loop, 0)),
    counters: { ...resetSameModelCounters(loop.counters), overloadChainRetries: retries + 1 },
    profileId: undefined,
    triedProfiles: [],
    thinking: undefined,
    attemptedThinking: [],
  };
  return {
    loop: restarted,
    decision: { action: "wait", waitSeconds: Math.ceil(backoffMs / 1000), reason: "overload_chain_retry" },
    effects: profileFailure(loop, "overloaded"),
  };
}

/** Errors with no visible output and no useful reason: resubmit quietly a few times. */
function onSilentCandidate(loop: LoopState, outcome: Failed): Step {
  const { failure } = outcome;
  if (!failure.retryable) return giveUp(loop, failure.kind, surfacedText(failure.kind, failure.message), failure.kind, { detail: failure.message });
  if (!failure.responseStarted && loop.counters.silentErrorRetries < LIMITS.silentErrorRetries) {
    return again(bump(loop, "silentErrorRetries"), "silent_retry");
  }
  return failover(loop, failure.kind, failure.message);
}

function canRotate(loop: LoopState, kind: FailureKind): boolean {
  if (NO_ROTATION.has(kind)) return false;
  const untried = profileCountAt(loop) - loop.triedProfiles.length - 1;
  if (untried <= 0) return false;
  // The rotation caps only hold while a fallback model can take over instead.
  if (kind === "rate_limit" && loop.counters.rateLimitRotations >= LIMITS.rateLimitProfileRotations && hasFallback(loop)) return false;
  if (kind === "overloaded" && loop.counters.overloadRotations >= LIMITS.overloadProfileRotations && hasFallback(loop)) return false;
  return true;
}

function rotateProfile(loop: LoopState, kind: FailureKind): Step {
  const rotated = kind === "rate_limit" ? bump(loop, "rateLimitRotations") : kind === "overloaded" ? bump(loop, "overloadRotations") : loop;
  const next: LoopState = {
    ...rotated,
    counters: { ...rotated.counters, rateLimitRetries: 0 },
    profileId: undefined,
    triedProfiles: loop.profileId ? [...loop.triedProfiles, loop.profileId] : loop.triedProfiles,
  };
  return again(next, "rotate_profile", profileFailure(loop, kind));
}

/** Failures that condemn the key itself, whatever model it is used with. */
const KEY_FAILURES: ReadonlySet<FailureKind> = new Set(["auth", "auth_permanent", "billing"]);

function rememberKeyFailure(loop: LoopState, kind: FailureKind): LoopState {
  const { profileId } = loop;
  if (!profileId || !KEY_FAILURES.has(kind)) return loop;
  if (loop.failedProfiles.some((f) => f.profileId === profileId && f.modelIndex === loop.modelIndex)) return loop;
  return { ...loop, failedProfiles: [...loop.failedProfiles, { profileId, modelIndex: loop.modelIndex, reason: kind }] };
}

function trackIdle(loop: LoopState, outcome: Failed) {
  const idle = outcome.failure.kind === "timeout";
  // Output tokens alone are not progress: only a completed model turn resets the breaker.
  const previous = loop.counters.consecutiveIdleTimeouts;
  const consecutive = idle ? (outcome.completedModelProgress ? 0 : previous + 1) : previous;
  // Same-model rate-limit retries are consecutive: any other outcome resets the streak.
  const rateLimitRetries = outcome.failure.kind === "rate_limit" ? loop.counters.rateLimitRetries : 0;
  return { ...loop.counters, consecutiveIdleTimeouts: consecutive, rateLimitRetries };
}

/** What the caller reads; `_message` (the provider's) goes to `detail`, for the log only. */
function surfacedText(kind: FailureKind, _message: string): string {
  if (kind === "rate_limit") return USER_ERRORS.rateLimited;
  if (kind === "overloaded") return USER_ERRORS.overloaded;
  return USER_ERRORS.providerFailure(kind);
}
