import { describe, expect, it } from "vitest";
import { createMemoryLedger, UNCERTAIN_TOOL_RESULT } from "../../shared/agent/tool-ledger";
import { ABORTED_TOOL_RESULT, runToolCall, type ToolLifecycleDeps } from "../../shared/agent/tools/lifecycle";
import { HookRegistry } from "../../shared/hooks/registry";
import { call, countingTool, never, toolMap } from "./helpers";

const schema = { type: "object", properties: { n: { type: "integer", minimum: 1 } }, required: ["n"], additionalProperties: false };

function deps(overrides: Partial<ToolLifecycleDeps> = {}): ToolLifecycleDeps {
  return {
    tools: toolMap(countingTool("echo", { parameters: schema, behaviour: (args) => `n=${args.n}` })),
    hooks: new HookRegistry(),
    ledger: createMemoryLedger(),
    context: { runId: "r", sessionKey: "s", signal: new AbortController().signal },
    maxResultChars: 2000,
    timeoutMs: 1000,
    now: Date.now,
    ...overrides,
  };
}

describe("tool lifecycle", () => {
  it("runs a valid call and reports it completed", async () => {
    const out = await runToolCall(call("c1", "echo", { n: 2 }), deps());
    expect(out.result).toEqual({ role: "tool_result", toolCallId: "c1", toolName: "echo", content: "n=2", isError: false });
    expect(out.meta).toMatchObject({ status: "completed", isError: false, mutating: false, truncated: false, resultChars: 3 });
    expect(out.executed).toBe(true);
  });

  it("validates arguments against the tool's JSON schema before running it", async () => {
    const d = deps();
    const out = await runToolCall(call("c1", "echo", { n: 0, extra: true }), d);
    expect(out.result.isError).toBe(true);
    expect(out.result.content).toMatch(/^Error: invalid arguments: n: .*>=1/);
    expect((d.tools.get("echo") as ReturnType<typeof countingTool>).calls).toHaveLength(0);
    const broken = await runToolCall(call("c2", "echo", { _raw: '{"n": 1' }), d);
    expect(broken.result.content).toContain("not valid JSON");
  });

  it("answers an unknown tool with an error result (trimmed name), never a throw", async () => {
    const out = await runToolCall(call("c1", " nope ", {}), deps());
    expect(out.result).toMatchObject({ toolName: "nope", isError: true, content: 'Error: the tool "nope" is not available.' });
    expect(out.meta.status).toBe("failed");
  });

  it("formats a thrown error as an error result", async () => {
    const tools = toolMap(countingTool("boom", { behaviour: () => Promise.reject(new TypeError("disk full")) }));
    const out = await runToolCall(call("c1", "boom"), deps({ tools }));
    expect(out.result).toMatchObject({ isError: true, content: "Error: disk full" });
  });

  it("blocks through before_tool_call and passes rewritten params on", async () => {
    const hooks = new HookRegistry()
      .register("before_tool_call", (e) => ({ params: { n: (e.params.n as number) * 10 } }), { priority: 1 })
      .register("before_tool_call", (e) => (e.toolCallId === "c2" ? { block: true, blockReason: "not now" } : undefined));
    const rewritten = await runToolCall(call("c1", "echo", { n: 2 }), deps({ hooks }));
    expect(rewritten.result.content).toBe("n=20");
    const blocked = await runToolCall(call("c2", "echo", { n: 2 }), deps({ hooks }));
    expect(blocked.result).toMatchObject({ isError: true, content: "Error: not now" });
    expect(blocked.meta.status).toBe("blocked");
  });

  it("caps the result (after tool_result_persist) before it is stored or emitted", async () => {
    const tools = toolMap(countingTool("big", { behaviour: () => `secret ${"x".repeat(10_000)}` }));
    const hooks = new HookRegistry().register("tool_result_persist", (e) => ({ content: e.content.replace("secret", "public") }));
    const out = await runToolCall(call("c1", "big"), deps({ tools, hooks, maxResultChars: 3000 }));
    expect(out.result.content.length).toBeLessThanOrEqual(3000);
    expect(out.result.content.startsWith("public x")).toBe(true);
    expect(out.meta).toMatchObject({ truncated: true, resultChars: out.result.content.length });
  });

  it("cuts a tool that runs past its time limit, and reports an abort as aborted", async () => {
    const tools = toolMap(countingTool("slow", { behaviour: () => never() }));
    const timedOut = await runToolCall(call("c1", "slow"), deps({ tools, timeoutMs: 20 }));
    expect(timedOut.result).toMatchObject({ isError: true, content: "Error: the tool did not finish within 0 s." });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 10);
    const aborted = await runToolCall(call("c2", "slow"), deps({ tools, context: { runId: "r", sessionKey: "s", signal: controller.signal } }));
    expect(aborted.result).toMatchObject({ isError: true, content: ABORTED_TOOL_RESULT });
    expect(aborted.meta.status).toBe("aborted");
  });

  it("runs after_tool_call with the adjusted params, the result and the duration", async () => {
    const seen: unknown[] = [];
    const hooks = new HookRegistry()
      .register("before_tool_call", () => ({ params: { n: 7 } }))
      .register("after_tool_call", (e) => {
        seen.push({ params: e.params, result: e.result, isError: e.isError, hasDuration: e.durationMs >= 0 });
      });
    await runToolCall(call("c1", "echo", { n: 1 }), deps({ hooks }));
    expect(seen).toEqual([{ params: { n: 7 }, result: "n=7", isError: false, hasDuration: true }]);
  });
});

describe("tool-call ledger in the lifecycle (mutating tools)", () => {
  it("records start and completion, and replays a completed call instead of running it again", async () => {
    const write = countingTool("write", { mutating: true, behaviour: () => "written" });
    const ledger = createMemoryLedger();
    const first = await runToolCall(call("c1", "write"), deps({ tools: toolMap(write), ledger }));
    expect(ledger.entries.get("c1")).toMatchObject({ status: "completed", result: { content: "written", isError: false } });
    const again = await runToolCall(call("c1", "write"), deps({ tools: toolMap(write), ledger }));
    expect(write.calls).toHaveLength(1);
    expect(again.result).toEqual(first.result);
    expect(again.meta.status).toBe("replayed");
    expect(again.executed).toBe(false);
  });

  it("reports a call that started but never completed as uncertain, without running it", async () => {
    const write = countingTool("write", { mutating: true });
    const ledger = createMemoryLedger();
    await ledger.markStarted("c1", "write");
    const out = await runToolCall(call("c1", "write"), deps({ tools: toolMap(write), ledger }));
    expect(out.result).toMatchObject({ isError: true, content: UNCERTAIN_TOOL_RESULT });
    expect(out.meta.status).toBe("uncertain");
    expect(write.calls).toHaveLength(0);
  });

  it("leaves read-only tools out of the ledger", async () => {
    const ledger = createMemoryLedger();
    await runToolCall(call("c1", "echo", { n: 1 }), deps({ ledger }));
    expect(ledger.entries.size).toBe(0);
  });
});
