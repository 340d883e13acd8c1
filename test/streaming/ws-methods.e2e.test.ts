import { spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LocalStack } from "../../infra/local/stack";
import { readEvents } from "../../shared/aws/event-log";
import { getRun } from "../../shared/aws/runs";
import { chat, FakeOpenAIServer, heldChat } from "../support/fake-openai-server";
import { RUN_END_TIMEOUT_MS } from "../support/timeouts";
import { TestWsClient, type Frame } from "../support/ws-client";
import { startStackWithFakeOpenAI, stopStackWithFakeOpenAI } from "../support/fake-openai-stack";

/**
 * The rest of the streaming surface on the local stack (issue 7): the
 * thinking stream on request, agent.wait, aborting runs (running and not yet
 * started), sessions.list, and the REST view of runs.
 */
let stack: LocalStack;
let oai: FakeOpenAIServer;

beforeAll(async () => {
  ({ stack, oai } = await startStackWithFakeOpenAI());
});
afterAll(async () => stopStackWithFakeOpenAI({ stack, oai }));

const rest = async (method: string, path: string, body?: unknown) => {
  const response = await fetch(`${stack.restUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${stack.authToken}`, "content-type": "application/json" },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: response.status, body: (await response.json()) as any };
};

async function connected(): Promise<TestWsClient> {
  const client = await TestWsClient.open(stack.webSocketUrl);
  await client.request("connect", { auth: { token: stack.authToken }, caps: ["frame-chunks"] });
  return client;
}

const endOf = (runId: string) => (f: Frame) => f.event === "agent" && f.payload?.runId === runId && ["end", "error"].includes(f.payload?.data?.phase);

describe("thinking stream", () => {
  it("streams reasoning as `thinking` events only for a caller that asked", async () => {
    oai.enqueue(chat.stream({ reasoning: "Let me think it through.", text: "42" }), chat.stream({ reasoning: "Quietly.", text: "43" }));
    const client = await connected();
    try {
      const asked = await client.request("agent", { sessionKey: "think-1", message: "q1", streamThinking: true });
      await client.waitFor(endOf(asked.payload.runId));
      const silent = await client.request("agent", { sessionKey: "think-2", message: "q2" });
      await client.waitFor(endOf(silent.payload.runId));
      const thinking = (runId: string) => client.agentEvents(runId).filter((f) => f.payload.stream === "thinking").map((f) => f.payload.data);
      expect(thinking(asked.payload.runId).map((d) => d.delta).join("")).toBe("Let me think it through.");
      expect(thinking(asked.payload.runId).at(-1)).toMatchObject({ text: "Let me think it through." });
      expect(thinking(silent.payload.runId)).toEqual([]);
    } finally {
      await client.close();
    }
  }, RUN_END_TIMEOUT_MS);
});

describe("aborting", () => {
  it("ends a queued run at once (requester answered, lane kept), stops a running one, and the next run proceeds", async () => {
    // Prepare: A's answer is held until the test is done with it (only the abort ends A); B and C wait behind it (followup).
    const answerA = heldChat({ text: Array.from({ length: 200 }, (_, i) => `w${i} `) });
    oai.enqueue(answerA.step, chat.text("C done"));
    const client = await connected();
    try {
      const a = await client.request("agent", { sessionKey: "abort-1", message: "A" });
      await client.waitFor((f) => f.event === "agent" && f.payload?.runId === a.payload.runId && f.payload?.stream === "assistant");
      const b = await client.request("agent", { sessionKey: "abort-1", message: "B", queue: { mode: "followup" } });
      const c = await client.request("agent", { sessionKey: "abort-1", message: "C", queue: { mode: "followup" } });
      expect(b.payload).toMatchObject({ status: "accepted", intake: "queued" });

      // Act 1: abort B over REST before it starts.
      const abortedB = await rest("POST", `/v1/runs/${b.payload.runId}/abort`, {});
      // Assess 1
      expect(abortedB).toMatchObject({ status: 200, body: { runId: b.payload.runId, aborted: true, status: "aborted" } });
      const finalB = await client.waitFor((f) => f.type === "res" && f.id === b.id && f.payload?.status !== "accepted");
      expect(finalB).toMatchObject({ ok: false, payload: { status: "aborted" }, error: { code: "ABORTED" } });
      expect((await readEvents(stack.deps.db, b.payload.runId)).map((e) => e.data.phase)).toEqual(["error"]);

      // Act 2: abort A (running) over WebSocket.
      const abortedA = await client.request("runs.abort", { runId: a.payload.runId });
      expect(abortedA.payload).toMatchObject({ aborted: true, status: "aborting" });
      await client.waitFor(endOf(a.payload.runId), RUN_END_TIMEOUT_MS);
      expect(await client.request("agent.wait", { runId: a.payload.runId })).toMatchObject({ payload: { status: "timeout" } });
      expect((await getRun(stack.deps.db, a.payload.runId))?.status).toBe("aborted");

      // Assess 2: C, behind both, runs to the end.
      await client.waitFor(endOf(c.payload.runId), RUN_END_TIMEOUT_MS);
      expect(await client.request("agent.wait", { runId: c.payload.runId })).toMatchObject({ payload: { status: "ok" } });
      expect(await rest("POST", `/v1/runs/${c.payload.runId}/abort`, {})).toMatchObject({ status: 200, body: { aborted: false, status: "ok" } });
      expect(await rest("POST", "/v1/runs/run_nope/abort", {})).toMatchObject({ status: 404 });
    } finally {
      answerA.release();
      await client.close();
    }
  }, RUN_END_TIMEOUT_MS);
});

describe("REST view of runs and sessions.list", () => {
  it("GET /v1/runs/{id} and its events page by page; sessions.list knows the session", async () => {
    oai.enqueue(chat.text("hello there"));
    const client = await connected();
    try {
      const ack = await client.request("agent", { sessionKey: "rest-view-1", message: "hi" });
      const runId = ack.payload.runId as string;
      await client.waitFor(endOf(runId));
      const run = await rest("GET", `/v1/runs/${runId}`);
      expect(run).toMatchObject({ status: 200, body: { runId, status: "ok", runStatus: "ok", result: { payloads: [{ text: "hello there" }] } } });
      const total = run.body.lastSeq as number;
      expect(total).toBeGreaterThanOrEqual(3);
      const first = await rest("GET", `/v1/runs/${runId}/events?after=0&limit=2`);
      expect(first.body).toMatchObject({ hasMore: true, nextAfter: 2 });
      expect(first.body.events.map((e: { seq: number }) => e.seq)).toEqual([1, 2]);
      const rest2 = await rest("GET", `/v1/runs/${runId}/events?after=${first.body.nextAfter}`);
      expect(rest2.body.hasMore).toBe(false);
      expect(rest2.body.events.map((e: { seq: number }) => e.seq)).toEqual(Array.from({ length: total - 2 }, (_, i) => i + 3));
      expect(rest2.body.events[0]).toMatchObject({ runId, sessionKey: "rest-view-1", agentId: "main", ts: expect.any(Number) });

      const list = await client.request("sessions.list", { limit: 100 });
      expect(list.payload.sessions).toEqual(expect.arrayContaining([expect.objectContaining({ sessionKey: "rest-view-1", lastRunId: runId })]));
      const replay = await client.request("events.replay", { runId, afterSeq: total - 1 });
      expect(replay.payload).toMatchObject({ runId, afterSeq: total - 1, lastSeq: total, count: 1, hasMore: false, runStatus: "ok" });
    } finally {
      await client.close();
    }
  }, RUN_END_TIMEOUT_MS);
});

describe("terminal client (`npm run agent`)", () => {
  function agentCli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const child = spawn(process.execPath, ["--import", "tsx", "shared/client/cli.ts", "--url", stack.webSocketUrl, "--token", stack.authToken, ...args], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
  }

  it("streams the reply, shows tool activity, and exits with the run's status", async () => {
    oai.enqueue(chat.toolCall("calculator", { expression: "6 * 7" }), chat.text("The result is 42."));
    const ok = await agentCli(["--session", "cli-1", "what is 6 * 7?"]);
    expect(ok).toMatchObject({ code: 0, stdout: "The result is 42.\n" });
    expect(ok.stderr).toContain("[tool] calculator");
    oai.enqueue(chat.error(400, { error: { message: "bad request", type: "invalid_request_error", param: null, code: null } }));
    const failed = await agentCli(["--session", "cli-2", "this fails"]);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain("[error]");
  }, RUN_END_TIMEOUT_MS);
});
