import { expect } from "vitest";
import { beforeAttempt, decideNext } from "../../shared/core/decide";
import type { FailureKind } from "../../shared/core/failures";
import { initialLoopState, type AttemptOutcome, type LoopShape, type LoopState } from "../../shared/core/run-loop";

type Failure = Extract<AttemptOutcome, { kind: "failed" }>;

/** A failed attempt outcome; `retryable` defaults to what adapters report for the kind. */
export function failed(kind: FailureKind, extra: Partial<Failure["failure"]> = {}, more: Partial<Omit<Failure, "kind" | "failure">> = {}): AttemptOutcome {
  const retryable = ["rate_limit", "overloaded", "server_error", "timeout", "unknown"].includes(kind);
  return {
    kind: "failed",
    failure: { kind, message: `${kind} happened`, retryable, responseStarted: false, ...extra },
    completedModelProgress: false,
    ...more,
  };
}

export function loopOf(modelCount = 1, shape: LoopShape = {}, overrides: Partial<LoopState> = {}): LoopState {
  return { ...initialLoopState(modelCount, shape), ...overrides };
}

/** The loop head then the decision, as the Attempt task runs them; `profileId` is what the prelude chose. */
export function iterate(loop: LoopState, outcome: AttemptOutcome, profileId?: string) {
  const head = beforeAttempt(loop);
  expect(head.decision.action).toBe("attempt");
  return decideNext(profileId ? { ...head.loop, profileId } : head.loop, outcome);
}

/** Feeds the same outcome until the decision is not a plain retry; returns every step. */
export function repeatUntilSettled(loop: LoopState, outcome: AttemptOutcome, max = 50, profileFor?: (loop: LoopState) => string | undefined) {
  const steps = [];
  let current = loop;
  for (let i = 0; i < max; i += 1) {
    const step = iterate(current, outcome, profileFor?.(current));
    steps.push(step);
    if (step.decision.action === "finalize") break;
    current = step.loop;
  }
  return steps;
}
