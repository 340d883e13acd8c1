/**
 * The local API Gateway's integration timeout counts the time a function
 * runs, not the time its request waited for one of the function's local
 * sandboxes (in AWS that request would have had its own execution
 * environment). On a loaded machine a queued request used to answer 504
 * "Endpoint request timed out" although its function answered at once.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { startLocalApiGateway, type LocalApiGateway } from "../../infra/local/api-gateway";
import { invokeWithTimeout, type InvocationProgress } from "../../infra/local/api-gateway/invoke";
import { FunctionPool } from "../../infra/local/lambda/pool";
import { poolInvokers } from "../../infra/local/deploy/rest-routes";
import type { DeployedFunction } from "../../infra/local/deploy/deploy";
import { until } from "../support/until";

describe("invokeWithTimeout", () => {
  afterEach(() => vi.useRealTimers());

  it("does not count the time the invocation is queued", async () => {
    // Prepare: a 1 s integration timeout and an invocation queued for 5 s, then answering within 0.5 s of running
    vi.useFakeTimers();
    let progress!: InvocationProgress;
    let answer!: (value: string) => void;
    const outcome = invokeWithTimeout((p) => {
      progress = p;
      p.queued();
      return new Promise<string>((resolve) => (answer = resolve));
    }, 1_000);
    // Act
    await vi.advanceTimersByTimeAsync(5_000);
    progress.started();
    await vi.advanceTimersByTimeAsync(500);
    answer("done");
    // Assess
    await expect(outcome).resolves.toEqual({ kind: "returned", value: "done" });
  });

  it("still times out on the time the invocation runs, before and after its wait", async () => {
    // Prepare: 600 ms run, 5 s queued, 600 ms run again: 1.2 s of running against a 1 s timeout
    vi.useFakeTimers();
    let progress!: InvocationProgress;
    const outcome = invokeWithTimeout((p) => {
      progress = p;
      return new Promise<string>(() => undefined);
    }, 1_000);
    await vi.advanceTimersByTimeAsync(600);
    progress.queued();
    await vi.advanceTimersByTimeAsync(5_000);
    progress.started();
    // Act
    await vi.advanceTimersByTimeAsync(600);
    // Assess
    await expect(outcome).resolves.toEqual({ kind: "timedOut" });
  });

  it("times out an invocation that never queues, as before", async () => {
    vi.useFakeTimers();
    const outcome = invokeWithTimeout(() => new Promise<string>(() => undefined), 1_000);
    await vi.advanceTimersByTimeAsync(1_000);
    await expect(outcome).resolves.toEqual({ kind: "timedOut" });
  });
});

describe("the local REST integration", () => {
  const gateways: LocalApiGateway[] = [];
  afterEach(async () => {
    await Promise.all(gateways.splice(0).map((gateway) => gateway.close()));
  });

  it("answers a request that waited longer than the integration timeout for a sandbox", async () => {
    // Prepare: a 200 ms integration timeout; the handler is queued for 600 ms, then answers at once
    const gateway = await startLocalApiGateway({
      port: 0,
      stage: "local",
      webSocketHandler: async () => ({ statusCode: 200 }),
      webSocketRoutes: [],
      limits: { integrationTimeoutMs: 200 },
      restHandler: async (_event, _context, progress) => {
        progress?.queued();
        await new Promise((resolve) => setTimeout(resolve, 600));
        progress?.started();
        return { statusCode: 200, body: JSON.stringify({ ran: true }) };
      },
    });
    gateways.push(gateway);
    // Act
    const response = await fetch(`${gateway.restUrl}/v1/anything`);
    // Assess: without the pause this is API Gateway's 504
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ran: true });
  });
});

describe("a function pool at its concurrency", () => {
  const codeDir = mkdtempSync(join(tmpdir(), "queue-signals-fn-"));
  writeFileSync(join(codeDir, "index.mjs"), "export const handler = async (event) => { if (event.hold) await (await fetch(event.hold)).text(); return { ok: true }; };\n");
  afterAll(() => rmSync(codeDir, { recursive: true, force: true }));

  it("tells the invoker when its invocation waits for a sandbox and when it gets one", async () => {
    // Prepare: one sandbox, held by a first invocation until the barrier opens
    const held: ServerResponse[] = [];
    const barrier = createServer((_req, res) => held.push(res));
    await new Promise<void>((resolve) => barrier.listen(0, "127.0.0.1", resolve));
    const holdUrl = `http://127.0.0.1:${(barrier.address() as AddressInfo).port}/`;
    const pool = new FunctionPool(
      {
        name: "queue-signals-fn",
        arn: "arn:aws:lambda:us-east-1:000000000000:function:queue-signals-fn",
        codeDir,
        handler: "index.handler",
        timeoutSeconds: 30,
        memoryMb: 128,
        environment: { LAMBDA_TASK_ROOT: codeDir, _HANDLER: "index.handler", AWS_REGION: "us-east-1" },
        maxConcurrency: 1,
      },
      () => undefined,
    );
    const { invoke } = poolInvokers();
    const fn = { pool } as unknown as DeployedFunction;
    try {
      const first = invoke(fn)<{ ok: boolean }>({ hold: holdUrl });
      await until(async () => (held.length === 1 ? true : undefined), "the first invocation to hold the only sandbox");
      const signals: string[] = [];
      // Act
      const second = invoke(fn)<{ ok: boolean }>({}, { queued: () => signals.push("queued"), started: () => signals.push("started") });
      await until(async () => (signals.length === 1 ? true : undefined), "the second invocation to queue");
      const whileHeld = [...signals];
      for (const res of held) res.end("go");
      // Assess
      await expect(Promise.all([first, second])).resolves.toEqual([{ ok: true }, { ok: true }]);
      expect(whileHeld).toEqual(["queued"]);
      expect(signals).toEqual(["queued", "started"]);
      expect(pool.coldStarts).toBe(1);
    } finally {
      await pool.close();
      barrier.closeAllConnections();
      await new Promise((resolve) => barrier.close(resolve));
    }
  });
});
