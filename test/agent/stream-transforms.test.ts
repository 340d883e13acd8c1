import { describe, expect, it } from "vitest";
import { couldBeToolCall } from "../../shared/agent/stream/promote-text-tool-calls";
import { applyStreamTransforms, STREAM_TRANSFORMS, type StreamContext } from "../../shared/agent/stream/transforms";
import type { AssistantBlock } from "../../shared/core/messages";
import type { ProviderEvent } from "../../shared/providers/types";
import { assistant, call, text, usage } from "./helpers";

function contextWith(...tools: string[]): StreamContext {
  let n = 0;
  return { toolNames: new Set(tools), newCallId: () => `gen_${++n}` };
}

/** A provider stream: deltas / calls as given, then `end` with the message they add up to. */
async function* streamOf(parts: ({ text: string } | { id: string; name: string; args?: Record<string, unknown> })[]): AsyncGenerator<ProviderEvent> {
  const content: AssistantBlock[] = [];
  for (const part of parts) {
    if ("text" in part) {
      yield { type: "text-delta", text: part.text };
      const last = content[content.length - 1];
      if (last?.type === "text") last.text += part.text;
      else content.push(text(part.text));
    } else {
      yield { type: "tool-call", id: part.id, name: part.name, args: part.args ?? {} };
      content.push(call(part.id, part.name, part.args ?? {}));
    }
  }
  const stopReason = content.some((b) => b.type === "tool_call") ? "tool_calls" : "stop";
  yield { type: "end", message: assistant(content, { stopReason }), stopReason, usage: usage() };
}

async function run(parts: Parameters<typeof streamOf>[0], context = contextWith("calculator", "read")) {
  const events: ProviderEvent[] = [];
  for await (const event of applyStreamTransforms(streamOf(parts), context)) events.push(event);
  const end = events[events.length - 1];
  if (end.type !== "end") throw new Error("no end");
  return { events: events.slice(0, -1), message: end.message, stopReason: end.stopReason };
}

describe("stream compatibility transforms", () => {
  it("is one ordered list: sanitize malformed calls, then promote text calls, then trim names", () => {
    expect(STREAM_TRANSFORMS.map((t) => t.name)).toEqual([
      "sanitize_malformed_tool_calls",
      "promote_standalone_text_tool_calls",
      "trim_tool_call_names",
    ]);
  });

  it("passes ordinary text through unchanged and in its original chunks", async () => {
    const { events, message } = await run([{ text: "Hello " }, { text: "world" }]);
    expect(events).toEqual([
      { type: "text-delta", text: "Hello " },
      { type: "text-delta", text: "world" },
    ]);
    expect(message.content).toEqual([text("Hello world")]);
  });

  it("sanitize: unwraps a namespaced name of an offered tool, drops names no provider accepts, replaces missing and repeated ids", async () => {
    const { events, message, stopReason } = await run([
      { id: "a", name: "functions.calculator", args: { expression: "1+1" } },
      { id: "b", name: "bad name!" },
      { id: "", name: "read" },
      { id: "a", name: "read" },
    ]);
    const calls = events.filter((e) => e.type === "tool-call");
    expect(calls.map((e) => e.type === "tool-call" && [e.id, e.name])).toEqual([
      ["a", "calculator"],
      ["gen_1", "read"],
      ["gen_2", "read"],
    ]);
    expect(message.content).toEqual([call("a", "calculator", { expression: "1+1" }), call("gen_1", "read"), call("gen_2", "read")]);
    expect(stopReason).toBe("tool_calls");
  });

  it("sanitize: a message whose only call was dropped no longer claims tool_calls", async () => {
    const { message, stopReason } = await run([{ text: "hm" }, { id: "x", name: "???" }]);
    expect(message.content).toEqual([text("hm")]);
    expect(stopReason).toBe("stop");
  });

  it("promote: a whole answer that is a JSON tool call becomes a real call, and its JSON is never streamed as text", async () => {
    const { events, message, stopReason } = await run([{ text: '{"name": "calculator", ' }, { text: '"arguments": {"expression": "6*7"}}' }]);
    expect(events).toEqual([{ type: "tool-call", id: "gen_1", name: "calculator", args: { expression: "6*7" } }]);
    expect(message.content).toEqual([call("gen_1", "calculator", { expression: "6*7" })]);
    expect(stopReason).toBe("tool_calls");
  });

  it("promote: fenced JSON, <tool_call> tags, arguments as a JSON string, and arrays of calls", async () => {
    const fenced = await run([{ text: '```json\n{"name":"read","parameters":{"path":"a"}}\n```' }]);
    expect(fenced.message.content).toEqual([call("gen_1", "read", { path: "a" })]);
    const tagged = await run([{ text: '<tool_call>{"name":"read","arguments":"{\\"path\\":\\"b\\"}"}</tool_call>' }]);
    expect(tagged.message.content).toEqual([call("gen_1", "read", { path: "b" })]);
    const many = await run([{ text: '[{"name":"read","arguments":{}},{"function":{"name":"calculator","arguments":{"expression":"1"}}}]' }]);
    expect(many.message.content.map((b) => b.type === "tool_call" && b.name)).toEqual(["read", "calculator"]);
  });

  it("promote: JSON that is not a call to an offered tool is released as the text it was", async () => {
    const { events, message } = await run([{ text: '{"name": "launch_missiles", ' }, { text: '"arguments": {}}' }]);
    expect(events).toEqual([
      { type: "text-delta", text: '{"name": "launch_missiles", ' },
      { type: "text-delta", text: '"arguments": {}}' },
    ]);
    expect(message.content).toEqual([text('{"name": "launch_missiles", "arguments": {}}')]);
  });

  it("promote: held text is released as soon as it cannot be a call, and a native call means text is just text", async () => {
    expect(couldBeToolCall("  ")).toBe(true);
    expect(couldBeToolCall("``")).toBe(true);
    expect(couldBeToolCall("<tool")).toBe(true);
    expect(couldBeToolCall("{\"a\"")).toBe(true);
    expect(couldBeToolCall("Sure")).toBe(false);
    const native = await run([{ text: "{" }, { id: "n1", name: "read" }]);
    expect(native.events.map((e) => e.type)).toEqual(["text-delta", "tool-call"]);
  });

  it("trim: names padded with whitespace are trimmed in events and in the message", async () => {
    const { events, message } = await run([{ id: "c", name: "  calculator\n", args: { expression: "2" } }]);
    expect(events[0]).toMatchObject({ type: "tool-call", name: "calculator" });
    expect(message.content).toEqual([call("c", "calculator", { expression: "2" })]);
  });

  it("the order matters: a promoted call is never second-guessed by the sanitizer, and is trimmed like a native one", async () => {
    const { message } = await run([{ text: '{"name": " read ", "arguments": {"path": "x"}}' }]);
    expect(message.content).toEqual([call("gen_1", "read", { path: "x" })]);
  });

  it("an error terminal releases held text first, keeping the partial message", async () => {
    async function* failing(): AsyncGenerator<ProviderEvent> {
      yield { type: "text-delta", text: "{" };
      yield { type: "error", failure: { kind: "timeout", message: "idle", retryable: true, responseStarted: true }, partial: assistant([text("{")]) };
    }
    const events: ProviderEvent[] = [];
    for await (const event of applyStreamTransforms(failing(), contextWith("read"))) events.push(event);
    expect(events.map((e) => e.type)).toEqual(["text-delta", "error"]);
  });
});
