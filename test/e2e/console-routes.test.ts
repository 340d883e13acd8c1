/**
 * The read-only REST routes the web console reads, through the
 * template-deployed local stack: the session list and a run's loop path
 * (attempts, failure kinds, the decision after each, timings, spend).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLocalStack, type LocalStack } from "../../infra/local/stack";
import { loadAgentConfig } from "../../shared/config/config";
import { chat, FakeOpenAIServer, openAIErrorBody } from "../support/fake-openai-server";

let oai: FakeOpenAIServer;
let stack: LocalStack;
/** Every line the functions wrote (Powertools JSON logs and EMF), parsed when it is JSON. */
const functionLines: { fn: string; json: Record<string, unknown> }[] = [];
function collect(fn: string, line: string): void {
  try {
    const json = JSON.parse(line) as unknown;
    if (json && typeof json === "object") functionLines.push({ fn, json: json as Record<string, unknown> });
  } catch {
    // not JSON: a runtime line
  }
}

beforeAll(async () => {
  oai = await FakeOpenAIServer.start();
  const config = loadAgentConfig({ OPENAI_API_KEY: "test", OPENAI_BASE_URL: oai.baseURL, MODEL: "openai/gpt-4o" });
  stack = await startLocalStack({ config, waitStateMs: { WaitBeforeRetry: 50 }, functionLogs: collect });
});

afterAll(async () => {
  await stack?.close();
  await oai?.close();
});

const auth = (token = stack.authToken) => ({ authorization: `Bearer ${token}`, "content-type": "application/json" });
const get = (path: string, token?: string) => fetch(`${stack.restUrl}${path}`, { headers: auth(token) });

async function runToEnd(sessionKey: string, message: string): Promise<string> {
  const accepted = await fetch(`${stack.restUrl}/v1/agent`, { method: "POST", headers: auth(), body: JSON.stringify({ sessionKey, message }) });
  const { runId } = (await accepted.json()) as { runId: string };
  for (;;) {
    const waited = await fetch(`${stack.restUrl}/v1/runs/${runId}/wait`, { method: "POST", headers: auth(), body: JSON.stringify({ timeoutMs: 20_000 }) });
    const body = (await waited.json()) as { status: string };
    if (body.status !== "timeout") return runId;
  }
}

describe("GET /v1/runs/{runId}/trace", () => {
  it("lists each attempt with its failure kind and timings, and the decision that followed it", async () => {
    oai.enqueue(
      chat.error(429, openAIErrorBody("Rate limit reached for gpt-4o on requests per min (RPM): Limit 3, Used 3.", "requests", "rate_limit_exceeded")),
      chat.text("Recovered.", { prompt: 30, completion: 4 }),
    );
    const runId = await runToEnd("trace-1", "hi");
    const response = await get(`/v1/runs/${runId}/trace`);
    expect(response.status).toBe(200);
    const trace = (await response.json()) as { status: string; durationMs: number; spend: { input: number; output: number }; attempts: Record<string, unknown>[] };
    expect(trace).toMatchObject({ runId, sessionKey: "trace-1", status: "ok", model: "openai/gpt-4o" });
    expect(trace.durationMs).toBeGreaterThanOrEqual(0);
    expect(trace.spend).toMatchObject({ input: 30, output: 4 });
    expect(trace.attempts).toHaveLength(2);
    expect(trace.attempts[0]).toMatchObject({ n: 1, outcome: "failed", failure: { kind: "rate_limit", retryable: true }, decision: { action: "wait" } });
    expect(trace.attempts[1]).toMatchObject({ n: 2, outcome: "completed", usage: { input: 30, output: 4 }, decision: { action: "finalize", status: "ok" } });
    for (const step of trace.attempts) {
      expect(step.endedAt as number).toBeGreaterThanOrEqual(step.startedAt as number);
      expect(step.decidedAt as number).toBeGreaterThanOrEqual(step.endedAt as number);
    }
  }, 120_000);

  it("left EMF metrics in the deployed functions' output: the failed attempt by kind, the wait, tokens, the run's outcome", () => {
    const emf = functionLines.map((l) => l.json).filter((j) => j._aws !== undefined);
    expect(emf).toContainEqual(expect.objectContaining({ service: "agent-runner", outcome: "failed", failureKind: "rate_limit", Attempts: 1 }));
    expect(emf).toContainEqual(expect.objectContaining({ Waits: 1 }));
    expect(emf).toContainEqual(expect.objectContaining({ InputTokens: 30, OutputTokens: 4 }));
    expect(emf).toContainEqual(expect.objectContaining({ outcome: "ok", RunsEnded: 1 }));
    expect(emf.some((j) => typeof j.LaneWaitMs === "number")).toBe(true);
    expect(emf.some((j) => typeof j.TimeToFirstTokenMs === "number")).toBe(true);
    for (const line of emf) expect((line._aws as { CloudWatchMetrics: { Namespace: string }[] }).CloudWatchMetrics[0]!.Namespace).toBe("AgentRunner");
  });

  it("answers 404 for an unknown run and 401 without a valid key", async () => {
    expect((await get("/v1/runs/run_nope/trace")).status).toBe(404);
    expect((await get("/v1/runs/run_nope/trace", "wrong")).status).toBe(401);
  });
});

describe("logs", () => {
  it("carry the Lambda context and the correlation keys on every Powertools line", () => {
    const logs = functionLines.map((l) => l.json).filter((j) => typeof j.level === "string" && j.service === "agent-runner");
    for (const line of logs) expect(line).toMatchObject({ function_request_id: expect.any(String), cold_start: expect.any(Boolean), function_name: expect.any(String) });
    // The REST handler's lines name the run they served (GET /v1/runs/{runId}/trace above).
    console.log(`function log lines seen: ${logs.length}; EMF lines: ${functionLines.filter((l) => l.json._aws).length}`);
  });
});

describe("GET /v1/sessions", () => {
  it("lists sessions, most recently active first", async () => {
    oai.enqueue(chat.text("One."), chat.text("Two."));
    await runToEnd("list-a", "a");
    await runToEnd("list-b", "b");
    const body = (await (await get("/v1/sessions?limit=2")).json()) as { sessions: { sessionKey: string }[] };
    expect(body.sessions.map((s) => s.sessionKey)).toEqual(["list-b", "list-a"]);
  }, 120_000);

  it("refuses a malformed limit and unknown query parameters with 400", async () => {
    for (const query of ["limit=0", "limit=abc", "limit=501", "colour=blue"]) {
      const response = await get(`/v1/sessions?${query}`);
      expect(response.status, query).toBe(400);
      expect(await response.json()).toMatchObject({ error: { code: "INVALID_REQUEST" } });
    }
  });
});
