import { describe, expect, it } from "vitest";
import { ChunkAssembler, frameBytes, isChunkFrame, splitFrame } from "../../shared/protocol/chunks";
import { MAX_FRAME_BYTES } from "../../shared/protocol/limits";

const eventWith = (result: string, seq = 7) => ({
  type: "event",
  event: "agent",
  payload: { runId: "run_1", seq, stream: "tool", data: { phase: "result", name: "read", isError: false, result } },
  seq,
});

describe("frame splitting", () => {
  it("sends a frame that fits as it is", () => {
    const frame = eventWith("small");
    expect(splitFrame(frame)).toEqual([frame]);
  });

  it.each([
    ["ASCII", "x".repeat(200 * 1024)],
    ["multi-byte and emoji", "é漢😀".repeat(30_000)],
    ["quotes, backslashes and control characters", '"\\\n\u0001'.repeat(40_000)],
  ])("splits a 200 KB %s tool result into frames of at most 32 KB that reassemble exactly", (_label, result) => {
    // Prepare
    const frame = eventWith(result);
    // Act
    const parts = splitFrame(frame);
    // Assess
    expect(parts.length).toBeGreaterThan(1);
    for (const part of parts) {
      expect(isChunkFrame(part)).toBe(true);
      expect(frameBytes(part)).toBeLessThanOrEqual(MAX_FRAME_BYTES);
      expect((part as { seq?: number }).seq).toBe(7);
    }
    const assembler = new ChunkAssembler();
    // Arrival order does not matter; duplicates are ignored.
    const shuffled = [...parts.slice(1).reverse(), parts[1], parts[0]];
    const outputs = shuffled.map((p) => assembler.accept(JSON.parse(JSON.stringify(p))));
    expect(outputs.slice(0, -1).every((o) => o === undefined)).toBe(true);
    expect(outputs.at(-1)).toEqual(frame);
    expect(assembler.incomplete).toBe(0);
  });

  it("passes frames that are not chunks straight through", () => {
    const assembler = new ChunkAssembler();
    const frame = { type: "res", id: "1", ok: true, payload: {} };
    expect(assembler.accept(frame)).toBe(frame);
  });
});
