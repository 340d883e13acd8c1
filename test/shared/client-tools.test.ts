import { describe, expect, it } from "vitest";
import { loadAgentConfig, AgentConfigSchema } from "../../shared/config/config";
import { refuseClientToolCollisions } from "../../shared/intake/client-tool-names";
import { AgentRequestSchema } from "../../shared/protocol/agent-request";
import { resultText, ToolResultBodySchema, ToolResultParamsSchema } from "../../shared/protocol/client-tools";
import { ApiError } from "../../shared/protocol/errors";

const base = loadAgentConfig({ OPENAI_API_KEY: "k", MODEL: "openai/gpt-4o" });
const config = AgentConfigSchema.parse({
  ...base,
  tools: { ...base.tools, custom: [{ name: "deploy", description: "d", parameters: { type: "object", properties: {} }, url: "https://example.com/deploy" }] },
  mcp: { servers: { files: { url: "https://mcp.example.com/" } } },
});

describe("client tool names at intake", () => {
  it("refuses a built-in (configured or not), a custom tool, a plugin tool and an MCP server's namespace; accepts the rest", () => {
    for (const name of ["calculator", "read_skill", "deploy", "guard_tool", "files__read"]) {
      expect(() => refuseClientToolCollisions([{ name }], { config, pluginTools: [{ name: "guard_tool" }] }), name).toThrow(ApiError);
    }
    expect(() => refuseClientToolCollisions([{ name: "locate_user" }, { name: "files_read" }], { config })).not.toThrow();
  });
});

describe("client tool wire shapes", () => {
  it("the agent request: unique provider-safe names, defaults for description and parameters, a bounded timeout", () => {
    const ok = AgentRequestSchema.parse({ sessionKey: "s", message: "m", clientTools: [{ name: "a_b-1" }], clientToolTimeoutSeconds: 5 });
    expect(ok.clientTools).toEqual([{ name: "a_b-1", description: "", parameters: { type: "object", properties: {} } }]);
    for (const bad of [[{ name: "a" }, { name: "a" }], [{ name: "has space" }], [], [{ name: "x", extra: 1 }]]) {
      expect(AgentRequestSchema.safeParse({ sessionKey: "s", message: "m", clientTools: bad }).success, JSON.stringify(bad)).toBe(false);
    }
    expect(AgentRequestSchema.safeParse({ sessionKey: "s", message: "m", clientTools: [{ name: "a" }], clientToolTimeoutSeconds: 0 }).success).toBe(false);
  });

  it("a result: required, text or any JSON (sent as its JSON text), strict bodies", () => {
    expect(ToolResultBodySchema.safeParse({ toolCallId: "c" }).success).toBe(false);
    expect(ToolResultBodySchema.safeParse({ toolCallId: "c", result: "x", more: 1 }).success).toBe(false);
    expect(ToolResultParamsSchema.safeParse({ toolCallId: "c", result: "x" }).success).toBe(false);
    const parsed = ToolResultBodySchema.parse({ toolCallId: "c", result: { city: "Lisbon" }, isError: false });
    expect(resultText(parsed.result)).toBe('{"city":"Lisbon"}');
    expect(resultText("plain")).toBe("plain");
    expect(ToolResultBodySchema.safeParse({ toolCallId: "c", result: "x".repeat(300 * 1024) }).success).toBe(false);
  });
});
