import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLocalStack, type LocalStack } from "../../infra/local/stack";
import { AgentConfigSchema, loadAgentConfig } from "../../shared/config/config";
import { getRun, TERMINAL_STATUSES } from "../../shared/aws/runs";
import { chat, FakeOpenAIServer } from "../support/fake-openai-server";
import { RUN_END_TIMEOUT_MS } from "../support/timeouts";
import { until } from "../support/until";

/**
 * Long silent work is not a stalled run (issue 18): a tool call that says
 * nothing for longer than the stuck-session abort threshold keeps its run
 * alive through the attempt's heartbeat, and the sweeper leaves it alone.
 */
const WARN_MS = 4_000;
const ABORT_MS = 8_000;

let stack: LocalStack;
let oai: FakeOpenAIServer;
let slowJob: Server;
let toolStarted: Promise<number>;
let releaseTool: () => void;

beforeAll(async () => {
  oai = await FakeOpenAIServer.start();
  let started!: (at: number) => void;
  toolStarted = new Promise((resolve) => (started = resolve));
  const released = new Promise<void>((resolve) => (releaseTool = resolve));
  // The tool's endpoint answers only when the test says so: a silent job of any length.
  slowJob = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    started(Date.now());
    void released.then(() => {
      res.writeHead(200, { "content-type": "text/plain" });
      res.end("job finished");
    });
  });
  await new Promise<void>((resolve) => slowJob.listen(0, "127.0.0.1", resolve));
  const base = loadAgentConfig({ OPENAI_API_KEY: "test", OPENAI_BASE_URL: oai.baseURL, MODEL: "openai/gpt-4o" });
  const config = AgentConfigSchema.parse({
    ...base,
    diagnostics: { stuckSessionWarnMs: WARN_MS, stuckSessionAbortMs: ABORT_MS },
    tools: {
      custom: [
        {
          name: "slow_job",
          description: "Runs a long job and says nothing until it ends",
          parameters: { type: "object", properties: {} },
          url: `http://127.0.0.1:${(slowJob.address() as AddressInfo).port}/job`,
          mutating: false,
          timeoutSeconds: 300,
        },
      ],
    },
  });
  stack = await startLocalStack({ config, sweepIntervalMs: 0 });
});

afterAll(async () => {
  releaseTool?.();
  await stack?.close();
  await oai?.close();
  await new Promise((resolve) => slowJob?.close(resolve));
});

describe("long silent work", () => {
  it("heartbeats a run through a tool call longer than the stall abort threshold; the sweeper does not abort it", async () => {
    oai.enqueue(chat.toolCall("slow_job", {}, "call_slow"), chat.text("The job is done."));
    const response = await fetch(`${stack.restUrl}/v1/agent`, {
      method: "POST",
      headers: { authorization: `Bearer ${stack.authToken}`, "content-type": "application/json" },
      body: JSON.stringify({ sessionKey: "silent-work", message: "Run the job" }),
    });
    const { runId } = (await response.json()) as { runId: string };
    const startedAt = await toolStarted;

    // Silence past the abort threshold, with the run's heartbeat still moving.
    const beat = await until(async () => {
      const run = await getRun(stack.deps.db, runId);
      return run?.heartbeatAt !== undefined && run.heartbeatAt >= startedAt + ABORT_MS + 1_000 ? run.heartbeatAt : undefined;
    }, "a heartbeat after the abort threshold", RUN_END_TIMEOUT_MS);
    expect(beat - startedAt).toBeGreaterThan(ABORT_MS);

    await stack.sweepNow();
    const during = await getRun(stack.deps.db, runId);
    expect(during).toMatchObject({ status: "running" });
    expect(during?.abortRequestedAt).toBeUndefined();

    releaseTool();
    const ended = await until(async () => {
      const run = await getRun(stack.deps.db, runId);
      return run && TERMINAL_STATUSES.has(run.status) ? run : undefined;
    }, "the run to end", RUN_END_TIMEOUT_MS);
    expect(ended).toMatchObject({ status: "ok", result: { payloads: [{ text: "The job is done." }] } });
    // The model saw the tool's answer, not an abort.
    const second = oai.requests[1].body as { messages: { role: string; content: string }[] };
    expect(second.messages.find((m) => m.role === "tool")?.content).toBe("job finished");
  }, RUN_END_TIMEOUT_MS + 60_000);
});
