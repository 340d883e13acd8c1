import { describe, expect, it } from "vitest";
import { StreamCursor } from "../../shared/protocol/stream-cursor";

const ev = (seq: number, stream = "assistant", data: Record<string, unknown> = { delta: String(seq) }) => ({ seq, stream, data });

describe("StreamCursor: replay and live merged exactly once, in order", () => {
  it("releases in order, drops duplicates, holds events behind a gap until it is filled", () => {
    const cursor = new StreamCursor();
    expect(cursor.accept(ev(1)).map((e) => e.seq)).toEqual([1]);
    expect(cursor.accept(ev(3))).toEqual([]);
    expect(cursor.gap()).toBe(true);
    expect(cursor.accept(ev(1))).toEqual([]);
    expect(cursor.accept(ev(2)).map((e) => e.seq)).toEqual([2, 3]);
    expect(cursor.gap()).toBe(false);
    expect(cursor.delivered).toBe(3);
  });

  it("resumes after a known seq and marks the terminal lifecycle event", () => {
    const cursor = new StreamCursor(5);
    expect(cursor.accept(ev(4))).toEqual([]);
    expect(cursor.accept(ev(6, "lifecycle", { phase: "end" })).map((e) => e.seq)).toEqual([6]);
    expect(cursor.terminal).toBe(true);
  });

  it("treats a start after an error as a retry of the same run", () => {
    const cursor = new StreamCursor();
    cursor.accept(ev(1, "lifecycle", { phase: "error" }));
    expect(cursor.terminal).toBe(true);
    cursor.accept(ev(2, "lifecycle", { phase: "start" }));
    expect(cursor.terminal).toBe(false);
  });
});
