import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Worker } from "node:worker_threads";
import { listAttempts } from "../../shared/aws/attempts";
import { chat } from "../support/fake-openai-server";
import { decisionLabels, startLoopStack, type LoopStack } from "../support/loop-stack";
import { McpTestServer } from "../support/mcp-test-server";

/**
 * MCP tools through the template-deployed local stack: the config names two
 * servers (one real MCP server on loopback, one that is down); the fake
 * OpenAI model calls their tools; the attempt Lambda lists and calls them
 * with the official SDK client, the header secret coming from the
 * provider-keys secret in the Secrets Manager emulator.
 */
let loop: LoopStack;
let mcp: McpTestServer;
const DOWN_URL = "http://127.0.0.1:9/mcp"; // discard port: nothing listens

beforeAll(async () => {
  mcp = await McpTestServer.start();
  loop = await startLoopStack(({ openai }) => ({
    model: "openai/gpt-4o",
    providers: { openai },
    tools: { builtin: [] },
    mcp: {
      servers: {
        kb: { url: mcp.url, headers: { authorization: { secret: "mcp/kb/token", prefix: "Bearer ", value: "tok-e2e" } } },
        gone: { url: DOWN_URL, timeoutSeconds: 3 },
      },
    },
  }));
});

afterAll(async () => {
  await loop?.close();
  await mcp?.close();
});

afterEach(() => {
  const left = loop.oai.pending;
  loop.oai.clear();
  expect(left).toBe(0);
});

type ChatBody = { tools?: { function: { name: string } }[]; messages: { role: string; content: unknown; tool_call_id?: string }[] };
const bodiesFrom = (from: number) => loop.oai.requests.slice(from).map((r) => r.body as ChatBody);
const toolMessage = (body: ChatBody, id: string) => body.messages.find((m) => m.role === "tool" && m.tool_call_id === id);

describe("MCP tools end to end", () => {
  it("offers the server's tools, calls one with the secret header, and the result reaches the model", async () => {
    const from = loop.oai.requests.length;
    loop.oai.enqueue(chat.toolCall("kb__lookup", { query: "refund policy" }, "call_lookup"), chat.text("Refunds take 5 days."));
    const run = await loop.run("What is the refund policy?");
    expect(run.status).toBe("ok");
    const [first, second] = bodiesFrom(from);
    const offered = (first.tools ?? []).map((t) => t.function.name).sort();
    expect(offered).toEqual(["kb__create_ticket", "kb__fail_loudly", "kb__lookup", "kb__wait_here"]);
    expect(toolMessage(second, "call_lookup")?.content).toBe("Found: refund policy");
    expect(mcp.callsOf("lookup").at(-1)).toMatchObject({ args: { query: "refund policy" }, headers: { authorization: "Bearer tok-e2e" } });
    expect(run.record.result?.payloads).toEqual([{ text: "Refunds take 5 days." }]);
  });

  it("the header secret never enters the template or the assets (only its name does)", () => {
    const { stack } = loop;
    const assetDirs = new Set(Object.values(stack.functions).map((fn) => fn.environment.LAMBDA_TASK_ROOT));
    for (const dir of assetDirs) {
      const shipped = readFileSync(join(dir, "agent-config.json"), "utf8");
      expect(shipped).not.toContain("tok-e2e");
      expect(shipped).toMatch(/"secret": ?"mcp\/kb\/token"/);
    }
    expect(readFileSync(join(stack.assembly.dir, "AgentRunner.template.json"), "utf8")).not.toContain("tok-e2e");
  });

  it("a server that is down gives a clear tool error and the run still completes", async () => {
    const from = loop.oai.requests.length;
    loop.oai.enqueue(chat.toolCall("gone__search", { q: "x" }, "call_gone"), chat.text("The search service is down right now."));
    const run = await loop.run("Search for x");
    expect(run.status).toBe("ok");
    const [, second] = bodiesFrom(from);
    expect(String(toolMessage(second, "call_gone")?.content)).toMatch(/^Error: the tool "gone__search" is not available: the MCP server "gone" is unavailable for this attempt/);
    const toolEnd = run.events.find((e) => e.stream === "tool" && e.data.phase === "result");
    expect(toolEnd?.data).toMatchObject({ name: "gone__search", isError: true });
    expect(run.record.result?.payloads).toEqual([{ text: "The search service is down right now." }]);
  });

  it("a retried attempt does not re-run a completed mutating MCP tool", async () => {
    const tickets = mcp.callsOf("create_ticket").length;
    loop.oai.enqueue(
      chat.toolCalls([
        { id: "call_ticket", name: "kb__create_ticket", args: { title: "Printer on fire" } },
        { id: "call_wait", name: "kb__wait_here", args: {} },
      ]),
      chat.text("Ticket T-1 is open."),
    );
    mcp.holdWaits = true;
    const entered = mcp.nextWaitEntered();
    const running = loop.run("Open a ticket, then wait.");
    // The ticket exists (ledger: completed); the second call hangs. Crash the attempt Lambda now.
    await entered;
    killBusySandboxes(loop);
    mcp.releaseWaits();
    const run = await running;
    expect(run.status).toBe("ok");
    expect(run.states).toContain("RecoverAttempt");
    expect(decisionLabels(run.decisions).at(-1)).toBe("finalize:ok:completed");
    expect(mcp.callsOf("create_ticket").length - tickets).toBe(1);
    const attempts = await listAttempts(loop.stack.deps.db, run.runId);
    const replayed = attempts.flatMap((a) => a.tools ?? []).find((t) => t.toolCallId === "call_ticket");
    expect(replayed).toMatchObject({ name: "kb__create_ticket", mutating: true, status: "replayed" });
    expect(run.record.result?.payloads).toEqual([{ text: "Ticket T-1 is open." }]);
  });
});

/** Terminates the attempt function's busy sandboxes, as a Lambda crash would (the pool's worker threads). */
function killBusySandboxes(stack: LoopStack): void {
  const pool = stack.stack.functions.attempt.pool as unknown as { sandboxes: Set<{ busy: boolean; worker: Worker }> };
  const busy = [...pool.sandboxes].filter((s) => s.busy);
  expect(busy.length).toBeGreaterThan(0);
  for (const sandbox of busy) void sandbox.worker.terminate();
}
