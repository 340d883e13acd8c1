import { describe, expect, it } from "vitest";
import { ItemTooLargeError, RunNotFoundError, TranscriptInvariantError } from "../../shared/aws/errors";
import { ConfigError } from "../../shared/config/config";
import { initialLoopState } from "../../shared/core/run-loop";
import { UnknownProviderError } from "../../shared/providers/registry";
import { PERMANENT_CRASH_ERRORS, recoverFromCrash, TIMEOUT_CRASH_ERRORS } from "../../shared/run/recover";

const lambdaCause = (errorType: string, errorMessage: string) => JSON.stringify({ errorType, errorMessage, trace: [] });

describe("recoverFromCrash: a caught task failure goes through the same loop head and decision", () => {
  it("retries an unknown crash quietly (it counts as an iteration), with the cause in the message", () => {
    const step = recoverFromCrash({ runId: "r", loop: initialLoopState(1), crash: { Error: "Error", Cause: lambdaCause("Error", "socket hang up") } });
    expect(step.decision).toEqual({ action: "attempt", reason: "silent_retry" });
    expect(step.loop.iteration).toBe(1);
    expect(step).not.toHaveProperty("effects");
  });

  it("treats a task timeout as an idle timeout (the breaker counts it)", () => {
    const step = recoverFromCrash({ runId: "r", loop: initialLoopState(1), crash: { Error: "States.Timeout" } });
    expect(step.decision).toEqual({ action: "attempt", reason: "same_model_idle_retry" });
    expect(step.loop.counters.consecutiveIdleTimeouts).toBe(1);
  });

  it("ends at once on errors that cannot heal, even with a fallback model", () => {
    const step = recoverFromCrash({ runId: "r", loop: initialLoopState(2), crash: { Error: "TranscriptInvariantError", Cause: lambdaCause("TranscriptInvariantError", "orphan_tool_result") } });
    expect(step.decision).toMatchObject({ action: "finalize", status: "error" });
    expect((step.decision as { detail?: string }).detail).toContain("orphan_tool_result");
  });

  it("leaves a due continue-as-new to the next Attempt (which starts the fresh execution)", () => {
    const loop = initialLoopState(1, { iterationsPerExecution: 1 });
    const full = { ...loop, execution: { ...loop.execution, iterations: 1 } };
    const step = recoverFromCrash({ runId: "r", loop: full, crash: { Error: "Error" } });
    expect(step.decision).toEqual({ action: "attempt", reason: "silent_retry" });
    expect(step.loop.execution.iterations).toBe(1);
  });

  it("ends a run whose StartRun failed (no loop yet) with start_failed", () => {
    expect(recoverFromCrash({ runId: "r", crash: { Error: "Error" } }).decision).toMatchObject({ action: "finalize", reason: "start_failed" });
  });

  it("pins the error names it matches on", () => {
    expect(TIMEOUT_CRASH_ERRORS).toEqual(["States.Timeout", "Sandbox.Timedout"]);
    const names = [new TranscriptInvariantError([]), new RunNotFoundError("r"), new UnknownProviderError("x"), new ConfigError("x"), new ItemTooLargeError("x")].map((e) => e.name);
    expect([...PERMANENT_CRASH_ERRORS]).toEqual(names);
  });
});
