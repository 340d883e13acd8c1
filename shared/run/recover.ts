import { beforeAttempt, decideNext } from "../core/decide";
import { CRASH_EVENTS } from "../core/history-budget";
import { initialLoopState, type AttemptOutcome } from "../core/run-loop";
import type { FailureKind } from "../core/failures";
import type { RecoverInput, StepPointer } from "./pointer";

/**
 * Step Functions caught a task failure (a crashed or timed-out Lambda, an
 * adapter error). Classify it into an attempt outcome and let the same pure
 * decision choose: a fresh attempt on the last committed transcript, or the end.
 */
export function recoverFromCrash(input: RecoverInput): StepPointer {
  const loop = input.loop ?? initialLoopState(1);
  if (!input.loop) {
    // The run never got going (StartRun failed): end it with a clear error.
    return {
      runId: input.runId,
      loop,
      decision: { action: "finalize", status: "error", reason: "start_failed", error: crashMessage(input) },
    };
  }
  // The crashed attempt counts like any other: through the loop head, then the decision.
  const head = beforeAttempt(loop);
  if (head.decision.action === "finalize") return { runId: input.runId, loop: head.loop, decision: head.decision };
  // A due continue-as-new is left to the next Attempt's loop head, which starts the fresh execution.
  const headed = head.decision.action === "attempt" ? head.loop : loop;
  // The crash wrote the failed task's tries and this task into the history.
  const counted = { ...headed, execution: { ...headed.execution, events: headed.execution.events + CRASH_EVENTS } };
  const outcome: AttemptOutcome = {
    kind: "failed",
    failure: { kind: crashKind(input.crash.Error), message: crashMessage(input), retryable: isRetryableCrash(input.crash.Error), responseStarted: false },
    completedModelProgress: false,
  };
  // Profile cooldowns are not recorded for crashes: a crashed Lambda says nothing about the credential.
  const { loop: next, decision } = decideNext(counted, outcome);
  return { runId: input.runId, loop: next, decision };
}

/** Error names as Step Functions reports them for a task that ran out of time (pinned in test/run/recover.test.ts). */
export const TIMEOUT_CRASH_ERRORS: readonly string[] = ["States.Timeout", "Sandbox.Timedout"];

/** Our errors that will not heal by retrying the same attempt (names pinned against the classes). */
export const PERMANENT_CRASH_ERRORS: readonly string[] = ["TranscriptInvariantError", "RunNotFoundError", "UnknownProviderError", "ConfigError", "ItemTooLargeError"];

function crashKind(errorName: string): FailureKind {
  return TIMEOUT_CRASH_ERRORS.includes(errorName) ? "timeout" : "unknown";
}

export function isRetryableCrash(errorName: string): boolean {
  return !PERMANENT_CRASH_ERRORS.includes(errorName);
}

function crashMessage(input: RecoverInput): string {
  const cause = parseCause(input.crash.Cause);
  return `The agent step failed (${input.crash.Error}${cause ? `: ${cause}` : ""}).`;
}

/** Lambda errors arrive as a JSON Cause `{errorMessage, errorType, trace}`. */
function parseCause(cause: string | undefined): string | undefined {
  if (!cause) return undefined;
  try {
    const parsed = JSON.parse(cause) as { errorMessage?: string };
    return parsed.errorMessage ?? cause;
  } catch {
    return cause;
  }
}
