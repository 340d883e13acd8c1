import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLocalStack, type LocalStack } from "../../infra/local/stack";
import { AgentConfigSchema, loadAgentConfig } from "../../shared/config/config";
import { getRun } from "../../shared/aws/runs";
import { readEvents } from "../../shared/aws/event-log";
import { getExternalInput, resolveExternalInput } from "../../shared/aws/external-inputs";
import { chat, FakeOpenAIServer } from "../support/fake-openai-server";
import { TestWsClient } from "../support/ws-client";
import { until as waitUntil } from "../support/until";
import { runEnded, toolResultSent } from "../support/paused-runs";

/**
 * Client tools end to end through the template-deployed local stack (issue
 * 12): `clientTools` on the agent request; a call pauses the run (a
 * `.waitForTaskToken` state, status `paused`) until the client answers with
 * `POST /v1/runs/{runId}/tool-results` or WS `tools.result`, or the call's
 * deadline passes. Also: an abort wakes a paused run at once; a call that ran
 * before the pause in the same turn is not run again.
 */
let stack: LocalStack;
let oai: FakeOpenAIServer;
let toolServer: Server;
const lookups: string[] = [];

beforeAll(async () => {
  oai = await FakeOpenAIServer.start();
  toolServer = createServer((req, res) => {
    lookups.push(req.url ?? "");
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "text/plain" });
      res.end("lookup result");
    });
  });
  await new Promise<void>((resolve) => toolServer.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(toolServer.address() as AddressInfo).port}/lookup`;
  const base = loadAgentConfig({ OPENAI_API_KEY: "test", OPENAI_BASE_URL: oai.baseURL, MODEL: "openai/gpt-4o" });
  const config = AgentConfigSchema.parse({
    ...base,
    tools: {
      ...base.tools,
      // A read-only server-side tool (runs before the client tool in one turn), and one that needs approval.
      custom: [
        { name: "lookup", description: "Looks something up", parameters: { type: "object", properties: {} }, url, mutating: false },
        { name: "deploy", description: "Deploys", parameters: { type: "object", properties: {} }, url },
      ],
      requireApproval: ["deploy"],
    },
  });
  stack = await startLocalStack({ config, sweepIntervalMs: 0 });
}, 120_000);

afterAll(async () => {
  await stack?.close();
  await oai?.close();
  await new Promise((resolve) => toolServer?.close(resolve));
});

/** Client tool calls wait on deadlines of their own: a longer bound than the shared default. */
const until = <T>(read: () => Promise<T | undefined>, what: string) => waitUntil(read, what, 120_000);

const LOCATE = { name: "locate_user", description: "The user's city, from the client device", parameters: { type: "object", properties: { precise: { type: "boolean" } } } };

async function post(path: string, body: unknown): Promise<{ status: number; body: Record<string, any> }> {
  const response = await fetch(`${stack.restUrl}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${stack.authToken}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

async function startRun(sessionKey: string, message: string, extra: Record<string, unknown> = {}): Promise<string> {
  const { status, body } = await post("/v1/agent", { sessionKey, message, clientTools: [LOCATE], ...extra });
  expect(status).toBe(202);
  return body.runId as string;
}

type ToolData = { phase: string; name: string; toolCallId: string; args?: Record<string, unknown>; client?: boolean; result?: string; isError?: boolean; expiresAt?: number };

async function toolEvents(runId: string): Promise<ToolData[]> {
  return (await readEvents(stack.deps.db, runId, 0, 1000)).filter((e) => e.stream === "tool").map((e) => e.data as ToolData);
}

/** The run is paused and its client learned of the call (the `tool` start event with `client: true`). */
async function pausedFor(runId: string, toolCallId: string): Promise<ToolData> {
  return until(async () => {
    const start = (await toolEvents(runId)).find((d) => d.phase === "start" && d.toolCallId === toolCallId);
    const run = await getRun(stack.deps.db, runId);
    return start && run?.status === "paused" ? start : undefined;
  }, `run ${runId} to pause for ${toolCallId}`);
}

const ended = (runId: string) => runEnded(stack.deps.db, runId, 120_000);
const toolResultSeen = (toolCallId: string) => toolResultSent(oai.requests, toolCallId);

describe("client tools", () => {
  it("REST: the model is offered the tool, the run pauses for its call, the client's result continues it; answers are validated and once only", async () => {
    oai.enqueue(chat.toolCall("locate_user", { precise: true }, "call_loc"), chat.text("You are in Lisbon."));
    const runId = await startRun("client-tools-rest", "Where am I?");
    const start = await pausedFor(runId, "call_loc");
    expect(start).toMatchObject({ phase: "start", name: "locate_user", toolCallId: "call_loc", args: { precise: true }, client: true });
    const offered = (oai.requests[oai.requests.length - 1]!.body as { tools?: { function: { name: string; description: string } }[] }).tools ?? [];
    expect(offered.map((t) => t.function.name)).toContain("locate_user");

    expect(await post(`/v1/runs/${runId}/tool-results`, { toolCallId: "call_loc" })).toMatchObject({ status: 400 });
    expect(await post(`/v1/runs/${runId}/tool-results`, { toolCallId: "call_loc", result: "x", extra: 1 })).toMatchObject({ status: 400 });
    expect(await post(`/v1/runs/run_does_not_exist/tool-results`, { toolCallId: "call_loc", result: "x" })).toMatchObject({ status: 404, body: { error: { code: "NOT_FOUND" } } });
    expect(await post(`/v1/runs/${runId}/tool-results`, { toolCallId: "call_other", result: "x" })).toMatchObject({
      status: 409,
      body: { error: { code: "APPROVAL_CONFLICT", details: { reason: "unknown_tool_call" } } },
    });
    expect(await post(`/v1/runs/${runId}/tool-results`, { toolCallId: "call_loc", result: { city: "Lisbon" } })).toMatchObject({
      status: 200,
      body: { ok: true, runId, toolCallId: "call_loc" },
    });
    expect(await post(`/v1/runs/${runId}/tool-results`, { toolCallId: "call_loc", result: "Porto" })).toMatchObject({
      status: 409,
      body: { error: { code: "APPROVAL_CONFLICT", details: { reason: "already_resolved" } } },
    });

    expect(await ended(runId)).toMatchObject({ status: "ok", result: { payloads: [{ text: "You are in Lisbon." }] } });
    expect(toolResultSeen("call_loc")).toBe(JSON.stringify({ city: "Lisbon" }));
    const events = await toolEvents(runId);
    // One start (the pause's, for the client), one result (the answer as the model saw it).
    expect(events.filter((d) => d.phase === "start")).toHaveLength(1);
    expect(events.filter((d) => d.phase === "result")).toEqual([expect.objectContaining({ toolCallId: "call_loc", isError: false, result: JSON.stringify({ city: "Lisbon" }) })]);
  }, 240_000);

  it("intake refuses a client tool that collides with another tool, or a duplicate, with 400", async () => {
    for (const name of ["calculator", "lookup", "read_skill"]) {
      const refused = await post("/v1/agent", { sessionKey: "client-tools-collide", message: "hi", clientTools: [{ ...LOCATE, name }] });
      expect({ name, ...refused }).toMatchObject({ status: 400, body: { error: { code: "INVALID_REQUEST" } } });
    }
    expect(await post("/v1/agent", { sessionKey: "client-tools-collide", message: "hi", clientTools: [LOCATE, LOCATE] })).toMatchObject({ status: 400 });
    expect(await post("/v1/agent", { sessionKey: "client-tools-collide", message: "hi", clientTools: [{ ...LOCATE, name: "bad name" }] })).toMatchObject({ status: 400 });
    expect(await post("/v1/agent", { sessionKey: "client-tools-collide", message: "hi", clientTools: [LOCATE], clientToolTimeoutSeconds: 0 })).toMatchObject({ status: 400 });
  });

  it("no answer by clientToolTimeoutSeconds: the model gets `Client tool timed out`; a late answer is 409 expired", async () => {
    oai.enqueue(chat.toolCall("locate_user", {}, "call_late"), chat.text("I could not find out where you are."));
    const runId = await startRun("client-tools-timeout", "Where am I?", { clientToolTimeoutSeconds: 2 });
    await pausedFor(runId, "call_late");
    expect(await ended(runId)).toMatchObject({ status: "ok", result: { payloads: [{ text: "I could not find out where you are." }] } });
    expect(toolResultSeen("call_late")).toBe("Client tool timed out");
    expect(await post(`/v1/runs/${runId}/tool-results`, { toolCallId: "call_late", result: "Rome" })).toMatchObject({
      status: 409,
      body: { error: { code: "APPROVAL_CONFLICT", details: { reason: "expired" } } },
    });
  }, 240_000);

  it("WebSocket: the subscriber gets the `tool` event with client: true and answers with tools.result once", async () => {
    const client = await TestWsClient.open(stack.webSocketUrl);
    try {
      await client.request("connect", { auth: { token: stack.authToken } });
      oai.enqueue(chat.toolCall("locate_user", {}, "call_ws"), chat.text("Madrid, then."));
      const ack = await client.request("agent", { sessionKey: "client-tools-ws", message: "Where am I?", idempotencyKey: "client-tools-ws-1", clientTools: [LOCATE] });
      expect(ack).toMatchObject({ ok: true, payload: { status: "accepted" } });
      const runId = ack.payload.runId as string;
      const frame = await client.waitFor((f) => f.event === "agent" && f.payload?.stream === "tool" && f.payload?.data?.client === true, 120_000);
      expect(frame.payload).toMatchObject({ runId, data: { phase: "start", name: "locate_user", toolCallId: "call_ws", client: true } });
      expect(await client.request("tools.result", { runId, toolCallId: "call_ws" })).toMatchObject({ ok: false, error: { code: "INVALID_REQUEST" } });
      expect(await client.request("tools.result", { runId, toolCallId: "call_ws", result: "Madrid" })).toMatchObject({ ok: true, payload: { runId, toolCallId: "call_ws" } });
      expect(await client.request("tools.result", { runId, toolCallId: "call_ws", result: "Madrid" })).toMatchObject({ ok: false, error: { code: "APPROVAL_CONFLICT" } });
      expect(await ended(runId)).toMatchObject({ status: "ok", result: { payloads: [{ text: "Madrid, then." }] } });
      expect(toolResultSeen("call_ws")).toBe("Madrid");
    } finally {
      await client.close();
    }
  }, 240_000);

  it("durable: a result stored before a crash (no wake) is kept; the client's retry is 409 and wakes the run, which continues once with the stored result", async () => {
    oai.enqueue(chat.toolCall("locate_user", {}, "call_crash"), chat.text("Oslo it is."));
    const runId = await startRun("client-tools-crash", "Where am I?");
    await pausedFor(runId, "call_crash");
    // The resolver's first write, then the function dies before SendTaskSuccess.
    expect(await resolveExternalInput(stack.deps.db, runId, "call_crash", "client_tool", { result: "Oslo", isError: false })).toMatchObject({ ok: true });
    expect(await getRun(stack.deps.db, runId)).toMatchObject({ status: "paused" });
    expect(await post(`/v1/runs/${runId}/tool-results`, { toolCallId: "call_crash", result: "Bergen" })).toMatchObject({ status: 409, body: { error: { details: { reason: "already_resolved" } } } });
    expect(await ended(runId)).toMatchObject({ status: "ok", result: { payloads: [{ text: "Oslo it is." }] } });
    expect(toolResultSeen("call_crash")).toBe("Oslo");
    expect(await getExternalInput(stack.deps.db, runId, "call_crash")).toMatchObject({ status: "resolved", answer: { result: "Oslo" } });
    expect((await toolEvents(runId)).filter((d) => d.phase === "result")).toHaveLength(1);
  }, 240_000);

  it("parallel client calls of one turn are handed out together, answered in any order; the run continues once, when the last is answered", async () => {
    oai.enqueue(
      chat.toolCalls([
        { name: "locate_user", args: { precise: true }, id: "call_par_a" },
        { name: "locate_user", args: { precise: false }, id: "call_par_b" },
      ]),
      chat.text("Both located."),
    );
    const modelCallsBefore = oai.requests.length;
    const runId = await startRun("client-tools-parallel", "Locate me twice");
    // One pause: both start events are out before either call is answered.
    await pausedFor(runId, "call_par_a");
    await pausedFor(runId, "call_par_b");
    expect((await toolEvents(runId)).filter((d) => d.phase === "start").map((d) => d.toolCallId)).toEqual(["call_par_a", "call_par_b"]);

    // The second call first: stored, but the run waits for the other one.
    expect(await post(`/v1/runs/${runId}/tool-results`, { toolCallId: "call_par_b", result: "Lima" })).toMatchObject({ status: 200 });
    expect(await getRun(stack.deps.db, runId)).toMatchObject({ status: "paused" });
    expect((await getExternalInput(stack.deps.db, runId, "call_par_a"))?.status).toBe("pending");
    expect(await post(`/v1/runs/${runId}/tool-results`, { toolCallId: "call_par_a", result: "Quito" })).toMatchObject({ status: 200 });

    expect(await ended(runId)).toMatchObject({ status: "ok", result: { payloads: [{ text: "Both located." }] } });
    expect(toolResultSeen("call_par_a")).toBe("Quito");
    expect(toolResultSeen("call_par_b")).toBe("Lima");
    // The model was asked twice: the turn with both calls, then once with both results.
    expect(oai.requests.length - modelCallsBefore).toBe(2);
    const events = await toolEvents(runId);
    expect(events.filter((d) => d.phase === "start")).toHaveLength(2);
    expect(events.filter((d) => d.phase === "result").map((d) => d.toolCallId).sort()).toEqual(["call_par_a", "call_par_b"]);
  }, 240_000);

  it("a read-only call earlier in the paused turn is not run again after the pause", async () => {
    const before = lookups.length;
    oai.enqueue(
      chat.toolCalls([
        { name: "lookup", args: {}, id: "call_lookup" },
        { name: "locate_user", args: {}, id: "call_after_lookup" },
      ]),
      chat.text("Looked up and located."),
    );
    const runId = await startRun("client-tools-ledger", "Look up, then locate me");
    await pausedFor(runId, "call_after_lookup");
    expect(lookups.length - before).toBe(1);
    expect(await post(`/v1/runs/${runId}/tool-results`, { toolCallId: "call_after_lookup", result: "Quito" })).toMatchObject({ status: 200 });
    expect(await ended(runId)).toMatchObject({ status: "ok" });
    expect(lookups.length - before).toBe(1);
    expect(toolResultSeen("call_lookup")).toBe("lookup result");
    expect(toolResultSeen("call_after_lookup")).toBe("Quito");
  }, 240_000);
});

describe("an abort wakes a paused run", () => {
  it("REST abort of a run paused for a client tool ends it aborted without waiting for the call's deadline", async () => {
    oai.enqueue(chat.toolCall("locate_user", {}, "call_abort"));
    // A deadline far beyond the wait below: only the abort can end the pause in time.
    const runId = await startRun("client-tools-abort", "Where am I?", { clientToolTimeoutSeconds: 3600 });
    await pausedFor(runId, "call_abort");
    expect(await post(`/v1/runs/${runId}/abort`, {})).toMatchObject({ status: 202, body: { status: "aborting" } });
    expect(await ended(runId)).toMatchObject({ status: "aborted" });
    expect(await post(`/v1/runs/${runId}/tool-results`, { toolCallId: "call_abort", result: "late" })).toMatchObject({ status: 409, body: { error: { details: { reason: "run_ended" } } } });
  }, 240_000);

  it("interrupt mode: a newer message ends a run paused for a client tool at once, and the newer message runs", async () => {
    oai.enqueue(chat.toolCall("locate_user", {}, "call_interrupted"));
    const runId = await startRun("client-tools-interrupt", "Where am I?", { clientToolTimeoutSeconds: 3600 });
    await pausedFor(runId, "call_interrupted");
    oai.enqueue(chat.text("Doing the new thing."));
    const urgent = await post("/v1/agent", { sessionKey: "client-tools-interrupt", message: "forget it, do this", queue: { mode: "interrupt" } });
    expect(urgent).toMatchObject({ status: 202, body: { interruptedRunId: runId } });
    expect(await ended(runId)).toMatchObject({ status: "aborted" });
    expect(await ended(urgent.body.runId as string)).toMatchObject({ status: "ok" });
  }, 240_000);

  it("chat.abort of a run paused for an approval ends it aborted without waiting for the approval's deadline", async () => {
    const client = await TestWsClient.open(stack.webSocketUrl);
    try {
      await client.request("connect", { auth: { token: stack.authToken } });
      oai.enqueue(chat.toolCall("deploy", {}, "call_deploy_abort"));
      const { body } = await post("/v1/agent", { sessionKey: "client-tools-abort-approval", message: "Deploy" });
      const runId = body.runId as string;
      await until(async () => {
        const asked = (await readEvents(stack.deps.db, runId, 0, 1000)).some((e) => e.stream === "approval");
        return asked && (await getRun(stack.deps.db, runId))?.status === "paused" ? true : undefined;
      }, "the approval pause");
      expect(await client.request("chat.abort", { sessionKey: "client-tools-abort-approval", runId })).toMatchObject({ ok: true });
      expect(await ended(runId)).toMatchObject({ status: "aborted" });
    } finally {
      await client.close();
    }
  }, 240_000);
});
