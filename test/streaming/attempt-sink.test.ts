import { describe, expect, it } from "vitest";
import type { RunEventEmitter } from "../../shared/events/emitter";
import { createAttemptSink, DELTA_FLUSH_CHARS, EVENT_TOOL_RESULT_BYTES } from "../../shared/events/attempt-sink";

function recordingEmitter() {
  const events: { stream: string; data: Record<string, unknown> }[] = [];
  const emitter = { emit: (stream: string, data: Record<string, unknown>) => events.push({ stream, data }) } as unknown as RunEventEmitter;
  return { emitter, events };
}

const call = { type: "tool_call" as const, id: "call_1", name: "read", args: { path: "a" } };
const toolResult = (content: string) => ({ role: "tool_result" as const, toolCallId: "call_1", toolName: "read", content, isError: false });

describe("attempt sink: coalescing and what is streamed", () => {
  it("coalesces 1000 fast tokens into a handful of assistant events whose deltas add up", () => {
    // Prepare
    const { emitter, events } = recordingEmitter();
    const sink = createAttemptSink(emitter, { emitThinking: false });
    // Act
    for (let i = 0; i < 1000; i += 1) sink.assistantDelta("tok ");
    sink.flushDeltas();
    // Assess
    expect(events.length).toBe(Math.ceil(4000 / DELTA_FLUSH_CHARS));
    expect(events.map((e) => e.data.delta).join("")).toBe("tok ".repeat(1000));
    expect(events.at(-1)?.data.text).toBe("tok ".repeat(1000));
  });

  it("streams thinking only when the caller asked, on its own stream", () => {
    const quiet = recordingEmitter();
    const off = createAttemptSink(quiet.emitter, { emitThinking: false });
    off.thinkingDelta("hmm");
    off.flushDeltas();
    expect(quiet.events).toEqual([]);

    const loud = recordingEmitter();
    const on = createAttemptSink(loud.emitter, { emitThinking: true });
    on.thinkingDelta("let me ");
    on.thinkingDelta("think");
    on.assistantDelta("Answer");
    on.flushDeltas();
    expect(loud.events).toEqual([
      { stream: "thinking", data: { text: "let me think", delta: "let me think" } },
      { stream: "assistant", data: { text: "Answer", delta: "Answer" } },
    ]);
  });

  it("emits tool start, coalesced updates, and the result capped in bytes", () => {
    const { emitter, events } = recordingEmitter();
    const sink = createAttemptSink(emitter, { emitThinking: false });
    sink.toolStart(call);
    sink.toolUpdate(call, "line 1\n");
    sink.toolUpdate(call, "line 2\n");
    sink.toolResult(call, toolResult("é".repeat(EVENT_TOOL_RESULT_BYTES)));
    expect(events.map((e) => e.data.phase)).toEqual(["start", "update", "result"]);
    expect(events[0]?.data).toEqual({ phase: "start", name: "read", toolCallId: "call_1", args: { path: "a" } });
    expect(events[1]?.data).toEqual({ phase: "update", name: "read", toolCallId: "call_1", partialResult: "line 1\nline 2\n" });
    expect(Buffer.byteLength(String(events[2]?.data.result))).toBeLessThanOrEqual(EVENT_TOOL_RESULT_BYTES);
    expect(events[2]?.data).toMatchObject({ isError: false, result: expect.stringContaining("truncated") });
  });

  it("keeps a 200 KB tool result intact", () => {
    const { emitter, events } = recordingEmitter();
    const sink = createAttemptSink(emitter, { emitThinking: false });
    const big = "r".repeat(200 * 1024);
    sink.toolResult(call, toolResult(big));
    expect(events[0]?.data.result).toBe(big);
  });
});
