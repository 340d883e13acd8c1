import { describe, expect, it } from "vitest";
import { loadPlugins } from "../../shared/plugins/load";
import { runBeforeToolCall } from "../../shared/hooks/runners";
import { silentLog } from "../../shared/run/deps";
import type { AgentRunnerPlugin } from "../../shared/plugins/types";

const entry = (config: Record<string, unknown> = {}) => ({ path: "./plugins/p.ts", config });

describe("plugins registered at cold start", () => {
  it("registers hooks by priority and tools, with the plugin's own config", async () => {
    const seen: string[] = [];
    const plugin: AgentRunnerPlugin = {
      id: "guard",
      register(api) {
        api.on("before_tool_call", () => void seen.push(`low:${String(api.config.level)}`), { priority: 1 });
        api.on("before_tool_call", () => void seen.push("high"), { priority: 10 });
        api.registerTool({ name: "ping", description: "ping", execute: () => "pong" });
      },
    };
    const loaded = loadPlugins([{ default: plugin }], [entry({ level: 3 })], silentLog);
    await runBeforeToolCall(loaded.hooks, { runId: "r", sessionKey: "s", toolName: "x", toolCallId: "1", params: {} });
    expect(seen).toEqual(["high", "low:3"]);
    expect(loaded.ids).toEqual(["guard"]);
    expect(loaded.tools.map((t) => t.name)).toEqual(["ping"]);
    expect(await loaded.tools[0].execute({}, { runId: "r", sessionKey: "s", signal: new AbortController().signal })).toEqual({ content: "pong" });
    expect(loaded.hooks.has("before_tool_call")).toBe(true);
  });

  it("an unknown hook name fails at load, naming the plugin and the hook", () => {
    const plugin = { id: "typo", register: (api: { on: (n: string, h: () => void) => void }) => api.on("before_tool_cal", () => undefined) };
    expect(() => loadPlugins([{ default: plugin }], [entry()], silentLog)).toThrow(/plugin typo: unknown hook "before_tool_cal"/);
  });

  it("a duplicate tool name and a module without register fail at load", () => {
    const twice: AgentRunnerPlugin = { id: "dup", register: (api) => ["a", "a"].forEach((name) => api.registerTool({ name, description: name, execute: () => name })) };
    expect(() => loadPlugins([{ default: twice }], [entry()], silentLog)).toThrow(/duplicate tool name "a"/);
    expect(() => loadPlugins([{ default: { id: "x" } }], [entry()], silentLog)).toThrow(/must export default \{ id: string, register\(api\) \}/);
    expect(() => loadPlugins([], [entry()], silentLog)).toThrow(/synthesize again/);
  });
});
