import { describe, expect, it } from "vitest";
import { hooksFromConfig, toolMatcher } from "../../shared/hooks/from-config";
import { HookRegistry, type HookErrorReport } from "../../shared/hooks/registry";
import {
  BLOCKED_BY_FAILED_HOOK,
  BLOCKED_BY_HOOK,
  runBeforePromptBuild,
  runBeforeToolCall,
  runFirstAnswer,
  runMessageSending,
  runObservers,
  runToolResultPersist,
} from "../../shared/hooks/runners";

const ref = { runId: "r", sessionKey: "s" };
const toolEvent = { ...ref, toolName: "write", toolCallId: "c1", params: { path: "a" } };

describe("hook priorities", () => {
  it("runs higher priority first; equal priorities in registration order", () => {
    const hooks = new HookRegistry()
      .register("agent_end", () => undefined, { id: "low", priority: -5 })
      .register("agent_end", () => undefined, { id: "first-0" })
      .register("agent_end", () => undefined, { id: "high", priority: 10 })
      .register("agent_end", () => undefined, { id: "second-0" });
    expect(hooks.handlersOf("agent_end").map((h) => h.id)).toEqual(["high", "first-0", "second-0", "low"]);
  });
});

describe("before_tool_call decision rules (seed 001)", () => {
  it("block: true is terminal: lower-priority handlers do not run", async () => {
    const ran: string[] = [];
    const hooks = new HookRegistry()
      .register("before_tool_call", () => (ran.push("guard"), { block: true, blockReason: "no writes" }), { id: "guard", priority: 10 })
      .register("before_tool_call", () => (ran.push("later"), { block: false }), { id: "later" });
    expect(await runBeforeToolCall(hooks, toolEvent)).toMatchObject({ blocked: true, blockReason: "no writes", blockedBy: "guard" });
    expect(ran).toEqual(["guard"]);
  });

  it("block: false is a no-op: it neither blocks nor clears a block that comes after it", async () => {
    const hooks = new HookRegistry()
      .register("before_tool_call", () => ({ block: false }), { priority: 10 })
      .register("before_tool_call", () => ({ block: true }), { id: "blocker" });
    expect(await runBeforeToolCall(hooks, toolEvent)).toMatchObject({ blocked: true, blockReason: BLOCKED_BY_HOOK, blockedBy: "blocker" });
    const allowOnly = new HookRegistry().register("before_tool_call", () => ({ block: false }));
    expect(await runBeforeToolCall(allowOnly, toolEvent)).toMatchObject({ blocked: false });
  });

  it("params rewrites chain in priority order", async () => {
    const hooks = new HookRegistry()
      .register("before_tool_call", (e) => ({ params: { ...e.params, a: 1 } }), { priority: 2 })
      .register("before_tool_call", (e) => ({ params: { ...e.params, b: e.params.a } }), { priority: 1 });
    expect((await runBeforeToolCall(hooks, toolEvent)).params).toEqual({ path: "a", a: 1, b: 1 });
  });

  it("a handler that throws blocks the call and is reported", async () => {
    const reports: HookErrorReport[] = [];
    const hooks = new HookRegistry((r) => reports.push(r)).register("before_tool_call", () => {
      throw new Error("policy service down");
    }, { id: "policy" });
    expect(await runBeforeToolCall(hooks, toolEvent)).toMatchObject({ blocked: true, blockReason: BLOCKED_BY_FAILED_HOOK });
    expect(reports.map((r) => [r.hook, r.id])).toEqual([["before_tool_call", "policy"]]);
  });
});

describe("message_sending decision rules (seed 001)", () => {
  it("cancel: true is terminal; cancel: false is a no-op that cannot clear it", async () => {
    const ran: string[] = [];
    const hooks = new HookRegistry()
      .register("message_sending", (e) => (ran.push("rewrite"), { text: e.text.toUpperCase(), cancel: false }), { priority: 3 })
      .register("message_sending", () => (ran.push("cancel"), { cancel: true }), { id: "cancel", priority: 2 })
      .register("message_sending", () => (ran.push("after"), { cancel: false }), { priority: 1 });
    expect(await runMessageSending(hooks, { ...ref, text: "hi", channel: "ws" })).toEqual({ text: "HI", cancelled: true, cancelledBy: "cancel" });
    expect(ran).toEqual(["rewrite", "cancel"]);
  });
});

describe("before_prompt_build merging", () => {
  it("highest-priority systemPrompt wins, contexts accumulate in order, toolsAllow lists intersect", async () => {
    const hooks = new HookRegistry()
      .register("before_prompt_build", () => ({ systemPrompt: "A", prependContext: "p1", appendSystemContext: "x", toolsAllow: ["a", "b", "c"] }), { priority: 2 })
      .register("before_prompt_build", () => ({ systemPrompt: "B", prependContext: "p2", toolsAllow: ["b", "c", "d"] }), { priority: 1 })
      .register("before_prompt_build", () => ({ toolsAllow: ["c", "b"] }));
    const merged = await runBeforePromptBuild(hooks, { ...ref, prompt: "q", messages: [], systemPrompt: "base" });
    expect(merged).toEqual({ systemPrompt: "A", prependContext: "p1\n\np2", appendSystemContext: "x", toolsAllow: ["b", "c"] });
  });
});

describe("first-answer, observer and transform hooks", () => {
  it("before_agent_reply: the first handler that handles the turn wins", async () => {
    const hooks = new HookRegistry()
      .register("before_agent_reply", () => ({ handled: false }), { priority: 5 })
      .register("before_agent_reply", () => ({ handled: true, reply: "from cache" }))
      .register("before_agent_reply", () => ({ handled: true, reply: "never" }), { priority: -1 });
    expect(await runFirstAnswer(hooks, "before_agent_reply", { ...ref, prompt: "q" }, (r) => r.handled === true)).toEqual({ handled: true, reply: "from cache" });
  });

  it("observers all run; a failing one is reported, not thrown", async () => {
    const seen: string[] = [];
    const reports: HookErrorReport[] = [];
    const hooks = new HookRegistry((r) => reports.push(r))
      .register("agent_end", async () => {
        throw new Error("metrics down");
      })
      .register("agent_end", (e) => {
        seen.push(e.outcome);
      });
    await runObservers(hooks, "agent_end", { ...ref, messages: [], outcome: "completed", finalText: "", meta: { durationMs: 1, model: "offline/echo", attempts: 1, usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 } } });
    expect(seen).toEqual(["completed"]);
    expect(reports).toHaveLength(1);
  });

  it("tool_result_persist chains synchronously; a throwing or async handler leaves the content as it was", () => {
    const reports: HookErrorReport[] = [];
    const hooks = new HookRegistry((r) => reports.push(r))
      .register("tool_result_persist", (e) => ({ content: e.content.replace("secret", "[redacted]") }), { priority: 3 })
      .register("tool_result_persist", () => {
        throw new Error("bad");
      }, { priority: 2 })
      .register("tool_result_persist", (async () => ({ content: "async!" })) as never, { priority: 1 })
      .register("tool_result_persist", (e) => ({ content: `${e.content}!` }));
    expect(runToolResultPersist(hooks, { ...ref, toolName: "t", toolCallId: "c", content: "the secret", isError: false })).toBe("the [redacted]!");
    expect(reports).toHaveLength(2);
  });
});

describe("hooks declared in configuration", () => {
  it("blocks configured tools (prefix patterns) with their priority and reason", async () => {
    const hooks = hooksFromConfig({ blockTools: [{ tools: ["http_*", "write"], reason: "read-only agent", priority: 5 }] });
    expect(await runBeforeToolCall(hooks, { ...toolEvent, toolName: "http_fetch" })).toMatchObject({ blocked: true, blockReason: "read-only agent" });
    expect(await runBeforeToolCall(hooks, { ...toolEvent, toolName: "calculator" })).toMatchObject({ blocked: false });
    expect(toolMatcher(["*"])("anything")).toBe(true);
  });

  it("adds system contexts and the tool allow-list through before_prompt_build; code hooks combine with it", async () => {
    const code = new HookRegistry().register("before_prompt_build", () => ({ toolsAllow: ["calculator"] }), { priority: 9 });
    const hooks = hooksFromConfig({ blockTools: [], prependSystemContext: "Be brief.", toolsAllow: ["calculator", "current_time"] }).combinedWith(code);
    const merged = await runBeforePromptBuild(hooks, { ...ref, prompt: "q", messages: [], systemPrompt: "base" });
    expect(merged).toEqual({ prependSystemContext: "Be brief.", toolsAllow: ["calculator"] });
  });
});
