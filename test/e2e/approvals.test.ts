import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLocalStack, type LocalStack } from "../../infra/local/stack";
import { AgentConfigSchema, loadAgentConfig } from "../../shared/config/config";
import { getRun } from "../../shared/aws/runs";
import { readEvents } from "../../shared/aws/event-log";
import { chat, FakeOpenAIServer } from "../support/fake-openai-server";
import { TestWsClient } from "../support/ws-client";
import { until as waitUntil } from "../support/until";
import { runEnded, toolResultSent } from "../support/paused-runs";

/**
 * Approvals end to end through the template-deployed local stack (issue 12):
 * a call of a tool in `tools.requireApproval` pauses the run (status
 * `paused`, no Lambda running: a `.waitForTaskToken` state) until
 * `POST /v1/runs/{runId}/approvals/{approvalId}` answers or the deadline passes.
 */
const WARN_MS = 1_000;
const ABORT_MS = 2_000;

let stack: LocalStack;
let oai: FakeOpenAIServer;
let toolServer: Server;
const toolHits: { tool: string; body: string }[] = [];

beforeAll(async () => {
  oai = await FakeOpenAIServer.start();
  toolServer = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString()));
    req.on("end", () => {
      toolHits.push({ tool: req.url ?? "", body });
      res.writeHead(200, { "content-type": "text/plain" });
      res.end(`done ${req.url}`);
    });
  });
  await new Promise<void>((resolve) => toolServer.listen(0, "127.0.0.1", resolve));
  const url = (path: string) => `http://127.0.0.1:${(toolServer.address() as AddressInfo).port}${path}`;
  const tool = (name: string) => ({ name, description: `Deploys (${name})`, parameters: { type: "object", properties: { target: { type: "string" } } }, url: url(`/${name}`) });
  const base = loadAgentConfig({ OPENAI_API_KEY: "test", OPENAI_BASE_URL: oai.baseURL, MODEL: "openai/gpt-4o" });
  const config = AgentConfigSchema.parse({
    ...base,
    diagnostics: { stuckSessionWarnMs: WARN_MS, stuckSessionAbortMs: ABORT_MS },
    tools: { ...base.tools, custom: [tool("deploy"), tool("quick_deploy")], requireApproval: ["deploy", { tool: "quick_*", timeoutSeconds: 2 }] },
  });
  stack = await startLocalStack({ config, sweepIntervalMs: 0 });
});

afterAll(async () => {
  await stack?.close();
  await oai?.close();
  await new Promise((resolve) => toolServer?.close(resolve));
});

/** Approvals wait on a deadline of their own: a longer bound than the shared default. */
const until = <T>(read: () => Promise<T | undefined>, what: string) => waitUntil(read, what, 90_000);

async function post(path: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${stack.restUrl}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${stack.authToken}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function startRun(sessionKey: string, message: string): Promise<string> {
  const { status, body } = await post("/v1/agent", { sessionKey, message });
  expect(status).toBe(202);
  return body.runId as string;
}

type ApprovalData = { phase: string; approvalId: string; toolName: string; toolCallId: string; args: Record<string, unknown>; expiresAt: number; decision?: string };

async function approvalEvents(runId: string): Promise<ApprovalData[]> {
  return (await readEvents(stack.deps.db, runId, 0, 1000)).filter((e) => e.stream === "approval").map((e) => e.data as ApprovalData);
}

/** The n-th (1-based) approval request of the run, once the run is paused for it. */
async function requested(runId: string, n = 1): Promise<ApprovalData> {
  return until(async () => {
    const asked = (await approvalEvents(runId)).filter((d) => d.phase === "requested");
    const run = await getRun(stack.deps.db, runId);
    return asked.length >= n && run?.status === "paused" ? asked[n - 1] : undefined;
  }, `approval request ${n} of ${runId}`);
}

const ended = (runId: string) => runEnded(stack.deps.db, runId, 90_000);
const toolResultSeen = (toolCallId: string) => toolResultSent(oai.requests, toolCallId);

describe("approvals", () => {
  it("allow-once: the run pauses (not aborted by a sweep), the tool runs once after the answer, a second answer is 409", async () => {
    oai.enqueue(chat.toolCall("deploy", { target: "prod" }, "call_allow"), chat.text("Deployed to prod."));
    const runId = await startRun("approvals-allow", "Deploy to prod");
    const asked = await requested(runId);
    expect(asked).toMatchObject({ phase: "requested", toolName: "deploy", toolCallId: "call_allow", args: { target: "prod" } });
    expect(asked.expiresAt).toBeGreaterThan(Date.now());
    expect(toolHits.filter((h) => h.tool === "/deploy")).toHaveLength(0);

    // Paused past the stall-abort threshold: the sweeper leaves it alone.
    await until(async () => {
      const run = await getRun(stack.deps.db, runId);
      return run && Date.now() - (run.heartbeatAt ?? run.startedAt ?? 0) > ABORT_MS + 500 ? run : undefined;
    }, "the pause to outlast the stall threshold");
    await stack.sweepNow();
    const during = await getRun(stack.deps.db, runId);
    expect(during).toMatchObject({ status: "paused" });
    expect(during?.abortRequestedAt).toBeUndefined();

    expect(await post(`/v1/runs/${runId}/approvals/${asked.approvalId}`, { decision: "maybe" })).toMatchObject({ status: 400 });
    expect(await post(`/v1/runs/${runId}/approvals/${asked.approvalId}`, { decision: "allow-once" })).toMatchObject({
      status: 200,
      body: { approvalId: asked.approvalId, decision: "allow-once" },
    });
    const again = await post(`/v1/runs/${runId}/approvals/${asked.approvalId}`, { decision: "deny" });
    expect(again).toMatchObject({ status: 409, body: { error: { code: "APPROVAL_CONFLICT", details: { reason: "already_resolved" } } } });
    expect(await post(`/v1/runs/${runId}/approvals/${runId}.apr_nope`, { decision: "deny" })).toMatchObject({ status: 404 });

    expect(await ended(runId)).toMatchObject({ status: "ok", result: { payloads: [{ text: "Deployed to prod." }] } });
    expect(toolHits.filter((h) => h.tool === "/deploy")).toEqual([{ tool: "/deploy", body: JSON.stringify({ target: "prod" }) }]);
    expect(toolResultSeen("call_allow")).toBe("done /deploy");
    expect((await approvalEvents(runId)).map((d) => d.phase)).toEqual(["requested", "resolved"]);
    expect((await approvalEvents(runId))[1]).toMatchObject({ approvalId: asked.approvalId, decision: "allow-once" });
  }, 180_000);

  it("deny: the tool does not run and the model gets `Denied by user`", async () => {
    const before = toolHits.length;
    oai.enqueue(chat.toolCall("deploy", { target: "staging" }, "call_deny"), chat.text("Understood, not deploying."));
    const runId = await startRun("approvals-deny", "Deploy to staging");
    const asked = await requested(runId);
    expect(await post(`/v1/runs/${runId}/approvals/${asked.approvalId}`, { decision: "deny" })).toMatchObject({ status: 200 });
    expect(await ended(runId)).toMatchObject({ status: "ok", result: { payloads: [{ text: "Understood, not deploying." }] } });
    expect(toolHits.length).toBe(before);
    expect(toolResultSeen("call_deny")).toBe("Denied by user");
  }, 180_000);

  it("timeout: no answer by expiresAt gives `Approval timed out`; answering later is 409 expired", async () => {
    const before = toolHits.length;
    oai.enqueue(chat.toolCall("quick_deploy", { target: "dev" }, "call_timeout"), chat.text("The approval timed out."));
    const runId = await startRun("approvals-timeout", "Deploy to dev");
    const asked = await requested(runId);
    expect(asked.expiresAt - Date.now()).toBeLessThanOrEqual(2_000);
    expect(await ended(runId)).toMatchObject({ status: "ok", result: { payloads: [{ text: "The approval timed out." }] } });
    expect(toolResultSeen("call_timeout")).toBe("Approval timed out");
    expect(toolHits.length).toBe(before);
    const late = await post(`/v1/runs/${runId}/approvals/${asked.approvalId}`, { decision: "allow-once" });
    expect(late).toMatchObject({ status: 409, body: { error: { code: "APPROVAL_CONFLICT", details: { reason: "expired" } } } });
  }, 180_000);

  it("allow-always: later calls of that tool in the session need no approval", async () => {
    const before = toolHits.filter((h) => h.tool === "/deploy").length;
    oai.enqueue(
      chat.toolCall("deploy", { target: "eu" }, "call_always_1"),
      chat.toolCall("deploy", { target: "us" }, "call_always_2"),
      chat.text("Deployed to eu and us."),
    );
    const runId = await startRun("approvals-always", "Deploy to eu, then us");
    const asked = await requested(runId);
    expect(await post(`/v1/runs/${runId}/approvals/${asked.approvalId}`, { decision: "allow-always" })).toMatchObject({ status: 200 });
    expect(await ended(runId)).toMatchObject({ status: "ok", result: { payloads: [{ text: "Deployed to eu and us." }] } });
    expect((await approvalEvents(runId)).filter((d) => d.phase === "requested")).toHaveLength(1);
    expect(toolHits.filter((h) => h.tool === "/deploy").length - before).toBe(2);
    expect(toolResultSeen("call_always_2")).toBe("done /deploy");

    // The next run of the same session: no approval either.
    oai.enqueue(chat.toolCall("deploy", { target: "ap" }, "call_always_3"), chat.text("Deployed to ap."));
    const next = await startRun("approvals-always", "And ap");
    expect(await ended(next)).toMatchObject({ status: "ok" });
    expect(await approvalEvents(next)).toEqual([]);
  }, 180_000);

  it("WebSocket: OpenClaw's plugin.approval.requested reaches a subscriber; plugin.approval.resolve answers it once", async () => {
    const client = await TestWsClient.open(stack.webSocketUrl);
    try {
      await client.request("connect", { auth: { token: stack.authToken } });
      await client.request("sessions.subscribe", { sessionKey: "approvals-ws" });
      oai.enqueue(chat.toolCall("deploy", { target: "ws" }, "call_ws"), chat.text("Not deployed."));
      const runId = await startRun("approvals-ws", "Deploy over ws");
      const frame = await client.waitFor((f) => f.event === "plugin.approval.requested", 90_000);
      expect(frame.payload).toMatchObject({
        id: expect.stringMatching(/\.apr_/),
        request: { toolName: "deploy", toolCallId: "call_ws", sessionKey: "approvals-ws", allowedDecisions: ["allow-once", "allow-always", "deny"] },
      });
      expect(frame.payload.expiresAtMs).toBeGreaterThan(frame.payload.createdAtMs);
      await requested(runId);
      expect(await client.request("plugin.approval.resolve", { id: frame.payload.id, decision: "deny" })).toMatchObject({ ok: true });
      expect(await client.request("exec.approval.resolve", { id: frame.payload.id, decision: "deny" })).toMatchObject({ ok: false, error: { code: "APPROVAL_CONFLICT" } });
      const resolved = await client.waitFor((f) => f.event === "plugin.approval.resolved", 90_000);
      expect(resolved.payload).toMatchObject({ id: frame.payload.id, decision: "deny" });
      expect(await ended(runId)).toMatchObject({ status: "ok" });
      expect(toolResultSeen("call_ws")).toBe("Denied by user");
    } finally {
      await client.close();
    }
  }, 180_000);
});
