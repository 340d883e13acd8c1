import { randomUUID } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";

/**
 * A real MCP server for tests: the SDK's server side (McpServer +
 * StreamableHTTPServerTransport, stateful sessions) over node:http on
 * loopback. Its tools:
 *   lookup         read-only (annotations.readOnlyHint), answers "Found: <query>"
 *   create_ticket  mutating (no hint), records every call, answers "Created ticket T-<n>"
 *   wait_here      read-only; while `holdWaits` is set, it blocks until `releaseWaits()`
 *                  (a barrier for tests that crash an attempt mid-call)
 *   fail_loudly    read-only; answers with `isError: true`
 */
export interface McpCallRecord {
  tool: string;
  args: Record<string, unknown>;
  headers: IncomingHttpHeaders;
}

export class McpTestServer {
  readonly calls: McpCallRecord[] = [];
  /** tools/list requests served (the warm-function cache is visible here). */
  listings = 0;
  holdWaits = false;
  private waiters: (() => void)[] = [];
  private waitEntered: (() => void)[] = [];
  private readonly transports = new Map<string, StreamableHTTPServerTransport>();
  private server?: Server;
  private currentHeaders: IncomingHttpHeaders = {};

  static async start(): Promise<McpTestServer> {
    const mcp = new McpTestServer();
    await mcp.listen();
    return mcp;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}/mcp`;
  }

  callsOf(tool: string): McpCallRecord[] {
    return this.calls.filter((call) => call.tool === tool);
  }

  /** Resolves when a wait_here call is being held. */
  nextWaitEntered(): Promise<void> {
    return new Promise((resolve) => this.waitEntered.push(resolve));
  }

  releaseWaits(): void {
    this.holdWaits = false;
    for (const release of this.waiters.splice(0)) release();
  }

  async close(): Promise<void> {
    this.releaseWaits();
    await Promise.all([...this.transports.values()].map((t) => t.close().catch(() => undefined)));
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server?.closeAllConnections();
  }

  private async listen(): Promise<void> {
    this.server = createServer((req, res) => {
      void this.handle(req, res).catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(500).end(String(error));
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
  }

  private async handle(req: import("node:http").IncomingMessage, res: import("node:http").ServerResponse): Promise<void> {
    const body = req.method === "POST" ? await readJson(req) : undefined;
    if ((body as { method?: unknown } | undefined)?.method === "tools/list") this.listings += 1;
    const sessionId = req.headers["mcp-session-id"];
    let transport = typeof sessionId === "string" ? this.transports.get(sessionId) : undefined;
    if (!transport) {
      if (typeof sessionId === "string") {
        res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null }));
        return;
      }
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => void this.transports.set(id, transport!),
      });
      transport.onclose = () => {
        if (transport!.sessionId) this.transports.delete(transport!.sessionId);
      };
      await this.serverFor().connect(transport);
    }
    this.currentHeaders = req.headers;
    await transport.handleRequest(req, res, body);
  }

  private serverFor(): McpServer {
    const server = new McpServer({ name: "test-tools", version: "1.0.0" });
    const record = (tool: string, args: Record<string, unknown>) => this.calls.push({ tool, args, headers: this.currentHeaders });
    server.registerTool(
      "lookup",
      { description: "Look something up in the knowledge base.", inputSchema: { query: z.string() }, annotations: { readOnlyHint: true } },
      async ({ query }) => {
        record("lookup", { query });
        return { content: [{ type: "text", text: `Found: ${query}` }] };
      },
    );
    server.registerTool(
      "create_ticket",
      { description: "Create a support ticket.", inputSchema: { title: z.string() } },
      async ({ title }) => {
        record("create_ticket", { title });
        return { content: [{ type: "text", text: `Created ticket T-${this.callsOf("create_ticket").length}` }] };
      },
    );
    server.registerTool("wait_here", { description: "Waits for the test.", inputSchema: {}, annotations: { readOnlyHint: true } }, async () => {
      record("wait_here", {});
      if (this.holdWaits) {
        const held = new Promise<void>((resolve) => this.waiters.push(resolve));
        for (const entered of this.waitEntered.splice(0)) entered();
        await held;
      }
      return { content: [{ type: "text", text: "done waiting" }] };
    });
    server.registerTool("fail_loudly", { description: "Always fails.", inputSchema: {}, annotations: { readOnlyHint: true } }, async () => {
      record("fail_loudly", {});
      return { content: [{ type: "text", text: "the backend said no" }], isError: true };
    });
    return server;
  }
}

async function readJson(req: import("node:http").IncomingMessage): Promise<unknown> {
  let text = "";
  for await (const chunk of req) text += chunk;
  return text ? JSON.parse(text) : undefined;
}
