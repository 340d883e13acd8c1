import type { AttemptSink } from "../agent/attempt";
import { capText } from "../core/truncate";
import type { RunEventEmitter } from "./emitter";

/** Deltas are coalesced so a fast model costs one event per burst, not per token. */
export const DELTA_FLUSH_MS = 50;
export const DELTA_FLUSH_CHARS = 1024;
/** Tool results in events are capped well below the 32 KB frame size. */
export const EVENT_TOOL_RESULT_CHARS = 8000;

export interface CoalescingSink extends AttemptSink {
  /** Emits whatever delta text is still buffered. */
  flushDeltas(): void;
}

export function createAttemptSink(emitter: RunEventEmitter, options: { emitThinking: boolean }): CoalescingSink {
  let cumulative = "";
  let pending = "";
  let timer: NodeJS.Timeout | undefined;

  const flushDeltas = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (pending === "") return;
    cumulative += pending;
    emitter.emit("assistant", { text: cumulative, delta: pending });
    pending = "";
  };

  return {
    flushDeltas,
    assistantDelta(delta) {
      pending += delta;
      if (pending.length >= DELTA_FLUSH_CHARS) flushDeltas();
      else timer ??= setTimeout(flushDeltas, DELTA_FLUSH_MS);
    },
    thinkingDelta(delta) {
      if (options.emitThinking) emitter.emit("thinking", { delta });
    },
    toolStart(call) {
      flushDeltas();
      // A new model turn follows the tools; its text is a new message.
      cumulative = "";
      emitter.emit("tool", { phase: "start", name: call.name, toolCallId: call.id, args: call.args });
    },
    toolResult(call, result) {
      emitter.emit("tool", {
        phase: "result",
        name: call.name,
        toolCallId: call.id,
        isError: result.isError,
        result: capText(result.content, EVENT_TOOL_RESULT_CHARS).text,
      });
    },
  };
}
