import { describe, expect, it } from "vitest";
import { classifyProviderError } from "../../shared/providers/classify";
import {
  type ContentEvent,
  guardedStream,
  MessageBuilder,
  parseToolArguments,
  type StreamIO,
  type StreamOutcome,
} from "../../shared/providers/stream-guard";
import type { ModelRequest } from "../../shared/providers/types";
import { collect, endOf, errorOf } from "./helpers";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type Run = (io: StreamIO) => AsyncGenerator<ContentEvent, StreamOutcome>;

function guarded(run: Run, request: Pick<ModelRequest, "signal" | "idleTimeoutMs"> = {}) {
  return guardedStream({ provider: "fake", model: "m", request, classify: classifyProviderError, run });
}

/** An SDK-like source: yields the given items as fast as it is asked. */
async function* source<T>(items: T[]): AsyncGenerator<T> {
  for (const item of items) yield item;
}

describe("guardedStream: the contract", () => {
  it("builds the final message from deltas and ends once", async () => {
    // Prepare
    const run: Run = async function* (io) {
      for await (const piece of io.watch(async () => source(["Hel", "lo"]))) yield { type: "text-delta", text: piece };
      io.message.usage = { input: 3, output: 2, cacheRead: 0, cacheWrite: 0 };
      return { type: "end", stopReason: "stop", rawStopReason: "done" };
    };

    // Act
    const end = endOf(await collect(guarded(run)));

    // Assess
    expect(end.message).toEqual({
      role: "assistant",
      content: [{ type: "text", text: "Hello" }],
      provider: "fake",
      model: "m",
      stopReason: "stop",
      rawStopReason: "done",
      usage: { input: 3, output: 2, cacheRead: 0, cacheWrite: 0 },
    });
  });

  it("turns a throw before any output into an error event", async () => {
    // Prepare
    const run: Run = async function* () {
      throw new Error("boom");
    };

    // Act
    const error = errorOf(await collect(guarded(run)));

    // Assess
    expect(error.failure).toMatchObject({ kind: "unknown", message: "boom", responseStarted: false });
  });

  it("turns a throw after output into an error carrying the partial message", async () => {
    // Prepare
    const run: Run = async function* () {
      yield { type: "thinking-delta", text: "hmm" };
      yield { type: "tool-call", id: "c1", name: "t", args: {} };
      throw Object.assign(new TypeError("terminated"), { cause: { code: "UND_ERR_SOCKET" } });
    };

    // Act
    const error = errorOf(await collect(guarded(run)));

    // Assess
    expect(error.failure).toMatchObject({ kind: "server_error", responseStarted: true });
    expect(error.partial.content).toEqual([
      { type: "thinking", text: "hmm" },
      { type: "tool_call", id: "c1", name: "t", args: {} },
    ]);
  });

  it("keeps the contract even when the classifier itself throws", async () => {
    // Prepare
    const stream = guardedStream({
      provider: "fake",
      model: "m",
      request: {},
      classify: () => {
        throw new Error("classifier bug");
      },
      run: async function* () {
        throw new Error("boom");
      },
    });

    // Act
    const error = errorOf(await collect(stream));

    // Assess
    expect(error.failure.kind).toBe("unknown");
  });
});

describe("guardedStream: idle watchdog and abort", () => {
  it("does not count time the consumer spends between events", async () => {
    // Prepare
    const run: Run = async function* (io) {
      for await (const piece of io.watch(async () => source(["a", "b", "c"]))) yield { type: "text-delta", text: piece };
      return { type: "end", stopReason: "stop" };
    };
    const events = [];

    // Act: a slow consumer, three times the idle timeout per event.
    for await (const event of guarded(run, { idleTimeoutMs: 20 })) {
      events.push(event);
      await sleep(60);
    }

    // Assess
    expect(endOf(events).message.content).toEqual([{ type: "text", text: "abc" }]);
  });

  it("ends a read that ignores abort (a hung transport) with a timeout", async () => {
    // Prepare: next() never settles, whatever the signal says.
    const hung: AsyncIterable<string> = { [Symbol.asyncIterator]: () => ({ next: () => new Promise<IteratorResult<string>>(() => undefined) }) };
    const run: Run = async function* (io) {
      for await (const piece of io.watch(async () => hung)) yield { type: "text-delta", text: piece };
      return { type: "end", stopReason: "stop" };
    };

    // Act
    const error = errorOf(await collect(guarded(run, { idleTimeoutMs: 50 })));

    // Assess
    expect(error.failure).toEqual({ kind: "timeout", message: "No data from the provider for 50 ms.", retryable: true, responseStarted: false });
  });

  it("reports aborted, not timeout, when the caller aborts while waiting", async () => {
    // Prepare
    const controller = new AbortController();
    const hung: AsyncIterable<string> = { [Symbol.asyncIterator]: () => ({ next: () => new Promise<IteratorResult<string>>(() => undefined) }) };
    const run: Run = async function* (io) {
      for await (const piece of io.watch(async () => hung)) yield { type: "text-delta", text: piece };
      return { type: "end", stopReason: "stop" };
    };
    setTimeout(() => controller.abort(), 20);

    // Act
    const error = errorOf(await collect(guarded(run, { signal: controller.signal, idleTimeoutMs: 1000 })));

    // Assess
    expect(error.failure.kind).toBe("aborted");
    expect(error.partial.stopReason).toBe("aborted");
  });

  it("aborts the request and unwinds the adapter when the consumer stops early", async () => {
    // Prepare
    let seenSignal: AbortSignal | undefined;
    let unwound = false;
    const run: Run = async function* (io) {
      seenSignal = io.signal;
      try {
        yield { type: "text-delta", text: "one" };
        yield { type: "text-delta", text: "two" };
        return { type: "end", stopReason: "stop" };
      } finally {
        unwound = true;
      }
    };

    // Act
    for await (const event of guarded(run)) {
      if (event.type === "text-delta") break;
    }

    // Assess
    expect(seenSignal?.aborted).toBe(true);
    expect(unwound).toBe(true);
  });
});

describe("MessageBuilder", () => {
  it("keeps explicitly separated blocks apart and signs only the open thinking block", () => {
    // Prepare
    const builder = new MessageBuilder("anthropic", "m");

    // Act
    builder.apply({ type: "thinking-delta", text: "first" });
    builder.signThinking("sig-1");
    builder.breakBlock();
    builder.signThinking("sig-2"); // a redacted-display thinking block: signature only

    // Assess
    expect(builder.build("stop").content).toEqual([
      { type: "thinking", text: "first", signature: "sig-1" },
      { type: "thinking", text: "", signature: "sig-2" },
    ]);
  });
});

describe("parseToolArguments", () => {
  it.each([
    ['{"path":"a"}', { path: "a" }],
    ["", {}],
    ["   ", {}],
    ['{"path": "a', { _raw: '{"path": "a' }],
    ["[1,2]", { _raw: "[1,2]" }],
    ["null", { _raw: "null" }],
  ])("%j -> %j", (raw, expected) => {
    expect(parseToolArguments(raw)).toEqual(expected);
  });
});
