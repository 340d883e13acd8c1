import { describe, expect, it } from "vitest";
import { armGuard, observeToolOutcome, stableJson } from "../../shared/core/loop-guard";

describe("post-compaction loop guard (reference §I)", () => {
  const call = (args: unknown, result = "same") => ({ toolName: "read_file", args, result });

  it("aborts when the same tool, args and result repeat 3 times right after a compaction", () => {
    let guard = armGuard();
    const first = observeToolOutcome(guard, call({ path: "a", n: 1 }));
    expect(first.abort).toBe(false);
    guard = first.guard!;
    const second = observeToolOutcome(guard, call({ n: 1, path: "a" })); // key order does not matter
    expect(second.abort).toBe(false);
    const third = observeToolOutcome(second.guard, call({ path: "a", n: 1 }));
    expect(third).toMatchObject({ abort: true, toolName: "read_file", repeats: 3 });
  });

  it("does not abort when the result or the arguments change", () => {
    let guard = armGuard();
    for (const outcome of [call({ p: 1 }, "x"), call({ p: 1 }, "y"), call({ p: 2 }, "x")]) {
      const verdict = observeToolOutcome(guard, outcome);
      expect(verdict.abort).toBe(false);
      guard = verdict.guard!;
    }
  });

  it("disarms once its window of 3 tool outcomes is used up", () => {
    let state = observeToolOutcome(armGuard(), call({}, "1")).guard;
    state = observeToolOutcome(state, call({}, "2")).guard;
    state = observeToolOutcome(state, call({}, "3")).guard;
    expect(state).toBeUndefined();
    expect(observeToolOutcome(state, call({}, "3")).abort).toBe(false);
  });

  it("is inert when not armed", () => {
    expect(observeToolOutcome(undefined, call({}))).toEqual({ guard: undefined, abort: false });
  });

  it("hashes arguments with sorted keys", () => {
    expect(stableJson({ b: [1, { d: 1, c: 2 }], a: null })).toBe('{"a":null,"b":[1,{"c":2,"d":1}]}');
  });
});
