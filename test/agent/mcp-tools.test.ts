import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMemoryLedger } from "../../shared/agent/tool-ledger";
import { runToolCall, type ToolLifecycleDeps } from "../../shared/agent/tools/lifecycle";
import { McpCatalog } from "../../shared/agent/tools/mcp/catalog";
import { mcpToolName } from "../../shared/agent/tools/mcp/names";
import { loadMcpTools, mcpMissingToolReason, type McpToolSet } from "../../shared/agent/tools/mcp/tools";
import { toolRegistry } from "../../shared/agent/tools/registry";
import { splitSecrets, joinSecrets } from "../../shared/config/deployed";
import { AgentConfigSchema } from "../../shared/config/config";
import { McpConfigSchema } from "../../shared/config/mcp-config";
import { HookRegistry } from "../../shared/hooks/registry";
import { McpTestServer } from "../support/mcp-test-server";
import { call } from "./helpers";

/**
 * MCP tools against a real MCP server (the SDK's server side on loopback):
 * listing, naming, read-only vs mutating, calls through the one tool
 * lifecycle (hooks, ledger), a server that is down, and header secrets.
 */
let mcp: McpTestServer;
const DOWN_URL = "http://127.0.0.1:9/mcp"; // discard port: nothing listens

beforeAll(async () => {
  mcp = await McpTestServer.start();
});
afterAll(async () => {
  await mcp?.close();
});

const config = (servers: Record<string, unknown>, extra: Record<string, unknown> = {}) => McpConfigSchema.parse({ servers, ...extra });

function lifecycle(set: McpToolSet, overrides: Partial<ToolLifecycleDeps> = {}): ToolLifecycleDeps {
  return {
    tools: toolRegistry(set.tools),
    hooks: new HookRegistry(),
    ledger: createMemoryLedger(),
    context: { runId: "r", sessionKey: "s", signal: new AbortController().signal },
    maxResultChars: 4000,
    timeoutMs: 10_000,
    now: Date.now,
    missingToolReason: mcpMissingToolReason(set),
    ...overrides,
  };
}

describe("MCP tool surface", () => {
  it("offers each server's tools prefixed by the server name, read-only only when the server says so", async () => {
    const set = await loadMcpTools(config({ kb: { url: mcp.url } }), { catalog: new McpCatalog() });
    expect(set.unavailable.size).toBe(0);
    const byName = Object.fromEntries(set.tools.map((t) => [t.name, t]));
    expect(Object.keys(byName).sort()).toEqual(["kb__create_ticket", "kb__fail_loudly", "kb__lookup", "kb__wait_here"]);
    expect(byName.kb__lookup).toMatchObject({ mutating: false, description: "Look something up in the knowledge base." });
    expect(byName.kb__lookup.parameters).toMatchObject({ type: "object", properties: { query: { type: "string" } }, required: ["query"] });
    expect(byName.kb__create_ticket.mutating).toBe(true);
  });

  it("narrows to toolsAllow (exact names and prefix*)", async () => {
    const set = await loadMcpTools(config({ kb: { url: mcp.url, toolsAllow: ["lookup", "create_*"] } }), { catalog: new McpCatalog() });
    expect(set.tools.map((t) => t.name).sort()).toEqual(["kb__create_ticket", "kb__lookup"]);
  });

  it("lists once per warm catalog within the TTL, and again after it", async () => {
    let now = 1_000_000;
    const catalog = new McpCatalog(() => now);
    const before = mcp.listings;
    const cfg = config({ kb: { url: mcp.url } }, { listTtlSeconds: 60 });
    await loadMcpTools(cfg, { catalog });
    await loadMcpTools(cfg, { catalog });
    expect(mcp.listings - before).toBe(1);
    now += 61_000;
    await loadMcpTools(cfg, { catalog });
    expect(mcp.listings - before).toBe(2);
  });

  it("keeps names valid and distinct for providers", () => {
    expect(mcpToolName("kb", "lookup")).toBe("kb__lookup");
    const dotted = mcpToolName("kb", "files.read");
    expect(dotted).toMatch(/^kb__files_read_[a-z0-9]+$/);
    expect(dotted).not.toBe(mcpToolName("kb", "files_read"));
    expect(mcpToolName("kb", "x".repeat(100))).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
  });
});

describe("MCP calls through the tool lifecycle", () => {
  it("runs a read-only tool and returns its text", async () => {
    const set = await loadMcpTools(config({ kb: { url: mcp.url } }), { catalog: new McpCatalog() });
    const out = await runToolCall(call("c1", "kb__lookup", { query: "refund policy" }), lifecycle(set));
    expect(out.result).toMatchObject({ toolName: "kb__lookup", content: "Found: refund policy", isError: false });
    expect(out.meta).toMatchObject({ status: "completed", mutating: false });
  });

  it("records a mutating tool in the ledger and replays it instead of calling the server again", async () => {
    const set = await loadMcpTools(config({ kb: { url: mcp.url } }), { catalog: new McpCatalog() });
    const deps = lifecycle(set);
    const before = mcp.callsOf("create_ticket").length;
    const first = await runToolCall(call("t1", "kb__create_ticket", { title: "Printer on fire" }), deps);
    const again = await runToolCall(call("t1", "kb__create_ticket", { title: "Printer on fire" }), deps);
    expect(mcp.callsOf("create_ticket").length - before).toBe(1);
    expect(first.meta.status).toBe("completed");
    expect(again.meta.status).toBe("replayed");
    expect(again.result.content).toBe(first.result.content);
  });

  it("goes through before_tool_call like every tool (a block means the server is never called)", async () => {
    const set = await loadMcpTools(config({ kb: { url: mcp.url } }), { catalog: new McpCatalog() });
    const hooks = new HookRegistry().register("before_tool_call", (e) => (e.toolName.startsWith("kb__") ? { block: true, blockReason: "no MCP today" } : undefined));
    const before = mcp.callsOf("lookup").length;
    const out = await runToolCall(call("c1", "kb__lookup", { query: "x" }), lifecycle(set, { hooks }));
    expect(out.result).toMatchObject({ isError: true, content: "Error: no MCP today" });
    expect(mcp.callsOf("lookup").length).toBe(before);
  });

  it("passes a server-side isError result on as a tool error", async () => {
    const set = await loadMcpTools(config({ kb: { url: mcp.url } }), { catalog: new McpCatalog() });
    const out = await runToolCall(call("c1", "kb__fail_loudly", {}), lifecycle(set));
    expect(out.result).toMatchObject({ isError: true, content: "the backend said no" });
  });

  it("a server that is down takes only its own tools away, with a clear error when one is called", async () => {
    const set = await loadMcpTools(config({ kb: { url: mcp.url }, gone: { url: DOWN_URL, timeoutSeconds: 5 } }), { catalog: new McpCatalog() });
    expect(set.tools.some((t) => t.name === "kb__lookup")).toBe(true);
    expect([...set.unavailable.keys()]).toEqual(["gone"]);
    const out = await runToolCall(call("c1", "gone__search", { q: "x" }), lifecycle(set));
    expect(out.result.isError).toBe(true);
    expect(out.result.content).toMatch(/^Error: the tool "gone__search" is not available: the MCP server "gone" is unavailable for this attempt \(.+\)$/);
  });

  it("a completed mutating call is replayed from the ledger even when its server is down on the retry", async () => {
    const ledger = createMemoryLedger();
    const up = await loadMcpTools(config({ kb: { url: mcp.url } }), { catalog: new McpCatalog() });
    const first = await runToolCall(call("t9", "kb__create_ticket", { title: "Once" }), lifecycle(up, { ledger }));
    const down = await loadMcpTools(config({ kb: { url: DOWN_URL, timeoutSeconds: 5 } }), { catalog: new McpCatalog() });
    const retried = await runToolCall(call("t9", "kb__create_ticket", { title: "Once" }), lifecycle(down, { ledger }));
    expect(retried.meta.status).toBe("replayed");
    expect(retried.result).toMatchObject({ content: first.result.content, isError: false });
  });

  it("a server that goes down after listing answers the call with a tool error, not a throw", async () => {
    const flaky = await McpTestServer.start();
    const set = await loadMcpTools(config({ flaky: { url: flaky.url, timeoutSeconds: 5 } }), { catalog: new McpCatalog() });
    await flaky.close();
    const out = await runToolCall(call("c1", "flaky__lookup", { query: "x" }), lifecycle(set));
    expect(out.result.isError).toBe(true);
    expect(out.result.content).toMatch(/^Error: the MCP server "flaky" could not run lookup: /);
  });
});

describe("MCP header secrets", () => {
  const raw = {
    mcp: {
      servers: {
        kb: { url: "https://mcp.example.com/mcp", headers: { "x-tenant": "acme", authorization: { secret: "mcp/kb/token", prefix: "Bearer ", value: "s3cr3t" } } },
      },
    },
  };

  it("never ships a secret's value in the deployed configuration; the attempt function gets it back from the secret", () => {
    const { deployed, secretValues } = splitSecrets(AgentConfigSchema.parse(raw));
    expect(JSON.stringify(deployed.config)).not.toContain("s3cr3t");
    expect(deployed.secretKeys).toContain("mcp/kb/token");
    expect(secretValues["mcp/kb/token"]).toBe("s3cr3t");
    const joined = joinSecrets(deployed.config, secretValues);
    expect(joined.mcp.servers.kb.headers.authorization).toEqual({ secret: "mcp/kb/token", prefix: "Bearer ", value: "s3cr3t" });
    // A function without the secret sees only the reference.
    expect(joinSecrets(deployed.config, {}).mcp.servers.kb.headers.authorization).toEqual({ secret: "mcp/kb/token", prefix: "Bearer " });
  });

  it("sends the resolved header to the server; an unfilled secret makes that server unavailable with a clear reason", async () => {
    const withSecret = config({ kb: { url: mcp.url, headers: { authorization: { secret: "mcp/kb/token", prefix: "Bearer ", value: "tok-1" } } } });
    const set = await loadMcpTools(withSecret, { catalog: new McpCatalog() });
    await runToolCall(call("c1", "kb__lookup", { query: "auth" }), lifecycle(set));
    expect(mcp.callsOf("lookup").at(-1)?.headers.authorization).toBe("Bearer tok-1");
    const unfilled = await loadMcpTools(config({ kb: { url: mcp.url, headers: { authorization: { secret: "mcp/kb/token" } } } }), { catalog: new McpCatalog() });
    expect(unfilled.unavailable.get("kb")).toBe('the secret "mcp/kb/token" is not set (fill it in the provider-keys secret)');
  });
});
