import { describe, expect, it } from "vitest";
import { LIFECYCLE_ERROR_GRACE_MS, trackLifecycle, waitVerdict, type LifecycleMark } from "../../shared/core/lifecycle-wait";

const life = (ts: number, data: Record<string, unknown>) => ({ stream: "lifecycle", ts, data });
const feed = (events: { stream: string; ts: number; data: Record<string, unknown> }[]) =>
  events.reduce<LifecycleMark | undefined>((mark, event) => trackLifecycle(mark, event), undefined);

describe("agent.wait's reading of lifecycle events (reference A.5-A.6)", () => {
  it("is pending while the run runs and final at `end`", () => {
    expect(waitVerdict(feed([life(1, { phase: "start", startedAt: 1 })]), 10)).toEqual({ final: false });
    const ended = feed([life(1, { phase: "start", startedAt: 1 }), { stream: "assistant", ts: 2, data: {} }, life(3, { phase: "end", endedAt: 3 })]);
    expect(waitVerdict(ended, 3)).toEqual({ final: true, status: "ok", startedAt: 1, endedAt: 3 });
  });

  it("reports an aborted end as timeout", () => {
    expect(waitVerdict(feed([life(1, { phase: "end", aborted: true, endedAt: 1 })]), 1)).toMatchObject({ final: true, status: "timeout" });
  });

  it("holds a lifecycle error for the 15 s grace, then reports it", () => {
    const failed = feed([life(1000, { phase: "start", startedAt: 1000 }), life(2000, { phase: "error", error: "LLM request failed.", endedAt: 2000 })]);
    expect(waitVerdict(failed, 2000 + LIFECYCLE_ERROR_GRACE_MS - 1)).toEqual({ final: false });
    expect(waitVerdict(failed, 2000 + LIFECYCLE_ERROR_GRACE_MS)).toEqual({ final: true, status: "error", startedAt: 1000, endedAt: 2000, error: "LLM request failed." });
  });

  it("cancels the error when the same run starts again inside the grace", () => {
    const retried = feed([life(1000, { phase: "error", error: "x" }), life(5000, { phase: "start", startedAt: 5000 })]);
    expect(waitVerdict(retried, 1000 + LIFECYCLE_ERROR_GRACE_MS + 1)).toEqual({ final: false });
  });
});
