import { describe, expect, it } from "vitest";
import { beforeAttempt, decideNext } from "../../shared/core/decide";
import { AttemptOutcomeSchema, DecisionSchema, initialLoopState } from "../../shared/core/run-loop";

describe("a paused attempt", () => {
  it("decides `pause` with the input and its timeout, and gives back its iteration (no retry budget used)", () => {
    const head = beforeAttempt(initialLoopState(1));
    const outcome = AttemptOutcomeSchema.parse({ kind: "paused", inputId: "run_1.apr_x", timeoutSeconds: 300 });
    const step = decideNext(head.loop, outcome);
    expect(step.decision).toEqual({ action: "pause", inputId: "run_1.apr_x", timeoutSeconds: 300 });
    expect(DecisionSchema.parse(step.decision)).toEqual(step.decision);
    expect(step.loop.iteration).toBe(head.loop.iteration - 1);
    // The attempt number stays (attempt records are numbered as they ran).
    expect(step.loop.attempt).toBe(head.loop.attempt);
  });
});
