import type { AttemptSink } from "../agent/attempt";
import type { ToolCallBlock } from "../core/messages";
import { capText } from "../core/truncate";
import type { RunEventEmitter } from "./emitter";
import { toolEvent } from "./run-events";

/**
 * Deltas are coalesced so a fast model costs one event per burst, not per
 * token. 150 ms keeps the stream smooth to a reader (about 7 updates a second)
 * while a 1000-token answer at ~100 tok/s costs ~65 event-log writes and ~130
 * posts instead of ~200 and ~400 at 50 ms (BENCHMARKS.md, streaming).
 */
export const DELTA_FLUSH_MS = 150;
export const DELTA_FLUSH_CHARS = 1024;
/**
 * Tool results and arguments in events: the result the model saw (already
 * capped by `agent.maxToolResultChars`), bounded again so one event item stays
 * well under DynamoDB's 400 KB. Frames larger than 32 KB are split on the way
 * out, so this is about storage, not the wire.
 */
export const EVENT_TOOL_RESULT_BYTES = 300_000;

export interface CoalescingSink extends AttemptSink {
  /** Emits whatever delta text is still buffered. */
  flushDeltas(): void;
  /** A running tool's partial output (`tool` `update`); coalesced like text deltas. */
  toolUpdate(call: ToolCallBlock, partialResult: string): void;
  /** The turn streamed so far is in the transcript: its text is no longer retractable. */
  turnCommitted(): void;
  /**
   * The attempt ended with text streamed that no committed turn holds (it
   * failed mid-answer): drop what is still buffered and tell clients to drop
   * what they showed, so the next attempt's text is not appended to it.
   */
  retractUncommitted(reason: string): void;
}

/** The `assistant` / `thinking` data that tells a client to drop the message text shown so far. */
export function retractionData(reason: string): Record<string, unknown> {
  return { text: "", delta: "", reset: true, reason };
}

/** One stream's buffer: text accumulates until DELTA_FLUSH_CHARS or DELTA_FLUSH_MS, then goes out as one event. */
class DeltaBuffer {
  private cumulative = "";
  private pending = "";
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly send: (text: string, delta: string) => void) {}

  add(delta: string): void {
    this.pending += delta;
    if (this.pending.length >= DELTA_FLUSH_CHARS) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), DELTA_FLUSH_MS);
  }

  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending === "") return;
    this.cumulative += this.pending;
    this.send(this.cumulative, this.pending);
    this.pending = "";
  }

  /** A new message starts (after tools): its text is cumulative from empty again. */
  reset(): void {
    this.flush();
    this.cumulative = "";
  }

  /** Forgets the message without sending what is pending; true when any of it had been sent. */
  discard(): boolean {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const shown = this.cumulative !== "";
    this.cumulative = "";
    this.pending = "";
    return shown;
  }
}

export function createAttemptSink(emitter: RunEventEmitter, options: { emitThinking: boolean }): CoalescingSink {
  const assistant = new DeltaBuffer((text, delta) => emitter.emit("assistant", { text, delta }));
  const thinking = new DeltaBuffer((text, delta) => emitter.emit("thinking", { text, delta }));
  // Thinking and text interleave rarely; flushing the other keeps the log in model order.
  const flushDeltas = () => {
    thinking.flush();
    assistant.flush();
  };
  const updates = new Map<string, DeltaBuffer>();

  return {
    flushDeltas,
    turnCommitted() {
      flushDeltas();
      assistant.reset();
      thinking.reset();
    },
    retractUncommitted(reason) {
      if (thinking.discard()) emitter.emit("thinking", retractionData(reason));
      if (assistant.discard()) emitter.emit("assistant", retractionData(reason));
    },
    assistantDelta(delta) {
      thinking.flush();
      assistant.add(delta);
    },
    thinkingDelta(delta) {
      if (!options.emitThinking) return;
      assistant.flush();
      thinking.add(delta);
    },
    toolStart(call) {
      flushDeltas();
      assistant.reset();
      thinking.reset();
      emitter.emit("tool", toolEvent.start(call.name, call.id, call.args));
    },
    toolUpdate(call, partialResult) {
      let buffer = updates.get(call.id);
      if (!buffer) {
        buffer = new DeltaBuffer((_text, delta) => emitter.emit("tool", toolEvent.update(call.name, call.id, delta)));
        updates.set(call.id, buffer);
      }
      buffer.add(partialResult);
    },
    toolResult(call, result) {
      updates.get(call.id)?.flush();
      updates.delete(call.id);
      emitter.emit("tool", toolEvent.result(call.name, call.id, result.isError, capUtf8(result.content, EVENT_TOOL_RESULT_BYTES)));
    },
  };
}

/** capText by UTF-8 bytes: shrinks the character budget until the encoded text fits. */
export function capUtf8(text: string, maxBytes: number): string {
  let maxChars = maxBytes;
  let capped = capText(text, maxChars).text;
  while (Buffer.byteLength(capped, "utf8") > maxBytes && maxChars > 100) {
    maxChars = Math.floor(maxChars * 0.75);
    capped = capText(text, maxChars).text;
  }
  return capped;
}
