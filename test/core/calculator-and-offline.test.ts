import { describe, expect, it } from "vitest";
import { calculatorTool, evaluate } from "../../shared/agent/tools/calculator";
import { createOfflineProvider } from "../../shared/providers/offline";
import type { ProviderEvent } from "../../shared/providers/types";

async function collect(stream: AsyncIterable<ProviderEvent>): Promise<ProviderEvent[]> {
  const events: ProviderEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

describe("calculator tool", () => {
  it("evaluates with precedence and parentheses, without eval", () => {
    expect(evaluate("2 + 3 * 4")).toBe(14);
    expect(evaluate("(2 + 3) * 4")).toBe(20);
    expect(evaluate("-3 - -2")).toBe(-1);
    expect(evaluate("7 / 2")).toBe(3.5);
  });

  it("rejects code and division by zero", async () => {
    expect(() => evaluate("process.exit(1)")).toThrow(/expected a number/);
    expect(() => evaluate("1/0")).toThrow(/finite/);
    await expect(calculatorTool.execute({ expression: "" }, { runId: "r", sessionKey: "s", signal: new AbortController().signal })).rejects.toThrow(/non-empty/);
  });
});

describe("offline model", () => {
  const request = (content: string, withTools = true) => ({
    model: "echo",
    system: "sys",
    messages: [{ role: "user" as const, content }],
    tools: withTools ? [{ name: "calculator", description: "", parameters: {} }] : [],
  });

  it("streams a deterministic echo in several deltas and ends once", async () => {
    const events = await collect(createOfflineProvider().stream(request("hello there")));
    const deltas = events.filter((e) => e.type === "text-delta");
    expect(deltas.length).toBeGreaterThan(3);
    const end = events[events.length - 1];
    expect(end.type).toBe("end");
    expect(events.filter((e) => e.type === "end" || e.type === "error")).toHaveLength(1);
    const text = deltas.map((d) => (d as { text: string }).text).join("");
    expect(text).toContain('You said: "hello there"');
    expect(text).toContain("offline model");
    const again = await collect(createOfflineProvider().stream(request("hello there")));
    expect(again).toEqual(events);
  });

  it("calls the calculator for arithmetic and reports the tool result afterwards", async () => {
    const events = await collect(createOfflineProvider().stream(request("what is 6 * 7?")));
    expect(events[0]).toMatchObject({ type: "tool-call", name: "calculator", args: { expression: "6 * 7" } });
    expect(events[events.length - 1]).toMatchObject({ type: "end", stopReason: "tool_calls" });
    const followUp = await collect(
      createOfflineProvider().stream({
        ...request("what is 6 * 7?"),
        messages: [{ role: "tool_result", toolCallId: "c", toolName: "calculator", content: "42", isError: false }],
      }),
    );
    const text = followUp.filter((e) => e.type === "text-delta").map((e) => (e as { text: string }).text).join("");
    expect(text).toBe("The result is 42.");
  });

  it("does not call tools that are not offered", async () => {
    const events = await collect(createOfflineProvider().stream(request("2+2", false)));
    expect(events.some((e) => e.type === "tool-call")).toBe(false);
  });
});
