import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { correlationKeysOf } from "../../shared/observability/correlation";
import { METRIC } from "../../shared/observability/names";

describe("correlation keys", () => {
  it("reads runId and the next attempt's number from a state machine task input", () => {
    expect(correlationKeysOf({ runId: "run_1", loop: { attempt: 2 } })).toEqual({ runId: "run_1", attempt: 3 });
  });

  it("reads the run or the session from a REST path, and the tenant from the authorizer", () => {
    const rest = (path: string, authorizer?: Record<string, unknown>) => ({ path, requestContext: { stage: "prod", ...(authorizer ? { authorizer } : {}) } });
    expect(correlationKeysOf(rest("/v1/runs/run_9/trace", { tenantId: "t-1" }))).toEqual({ runId: "run_9", tenant: "t-1" });
    expect(correlationKeysOf(rest("/v1/sessions/agent%3Amain%3Amain/history"))).toEqual({ sessionKey: "agent:main:main" });
    expect(correlationKeysOf(rest("/v1/agent"))).toEqual({});
  });

  it("reads the connection and route of a WebSocket event", () => {
    expect(correlationKeysOf({ requestContext: { connectionId: "c1", routeKey: "agent" } })).toEqual({ connectionId: "c1", routeKey: "agent" });
  });

  it("reads the run and the execution ARN of an execution status change (continued executions too)", () => {
    const event = { source: "aws.states", detail: { name: "run_5-c2", executionArn: "arn:aws:states:eu-west-1:1:execution:m:run_5-c2" } };
    expect(correlationKeysOf(event)).toEqual({ runId: "run_5", executionArn: "arn:aws:states:eu-west-1:1:execution:m:run_5-c2" });
  });

  it("ignores anything else", () => {
    expect(correlationKeysOf(undefined)).toEqual({});
    expect(correlationKeysOf({ Records: [] })).toEqual({});
  });
});

describe("run metrics (EMF)", () => {
  // POWERTOOLS_DEV sends EMF to the global console, where the test can read it.
  let lines: Record<string, unknown>[] = [];
  let metrics: typeof import("../../shared/observability/run-metrics");
  let tools: typeof import("../../shared/observability/powertools");
  beforeAll(async () => {
    vi.stubEnv("POWERTOOLS_DEV", "true");
    vi.stubEnv("POWERTOOLS_METRICS_DISABLED", "false");
    metrics = await import("../../shared/observability/run-metrics");
    tools = await import("../../shared/observability/powertools");
  });
  const capture = () => {
    lines = [];
    vi.spyOn(console, "log").mockImplementation((line: unknown) => void lines.push(JSON.parse(String(line)) as Record<string, unknown>));
  };
  afterEach(() => vi.restoreAllMocks());
  const names = () => lines.flatMap((line) => ((line._aws as { CloudWatchMetrics: { Metrics: { Name: string }[] }[] }).CloudWatchMetrics[0]!.Metrics.map((m) => m.Name)));

  it("counts an attempt by outcome and failure kind, and the wait the loop decided", () => {
    capture();
    metrics.recordAttemptMetrics(
      { kind: "failed", failure: { kind: "rate_limit", message: "429", retryable: true, responseStarted: false }, completedModelProgress: false },
      { action: "wait", waitSeconds: 10, reason: "same_model_rate_limit" },
    );
    tools.powertools().metrics.publishStoredMetrics();
    expect(lines[0]).toMatchObject({ service: "agent-runner", outcome: "failed", failureKind: "rate_limit", [METRIC.attempts]: 1 });
    expect(names()).toEqual([METRIC.attempts, METRIC.waits]);
  });

  it("names rotations, fallbacks and plain retries apart, and counts a yield as none", () => {
    const completed = { kind: "completed" } as const;
    capture();
    for (const reason of ["rotate_profile", "fallback_model", "silent_retry", "yield"]) metrics.recordAttemptMetrics(completed, { action: "attempt", reason });
    tools.powertools().metrics.publishStoredMetrics();
    const stored = lines[lines.length - 1]!;
    expect(stored).toMatchObject({ [METRIC.rotations]: 1, [METRIC.fallbacks]: 1, [METRIC.retries]: 1 });
  });

  it("records tokens, cost, lane wait, time to first token, run outcome and the webhook ack hook", () => {
    capture();
    metrics.recordModelUsage({ input: 120, output: 30 }, 0.002);
    metrics.recordLaneWait(250);
    metrics.recordTimeToFirstToken(80);
    metrics.recordRunEnded("ok", 1500);
    metrics.recordWebhookAck("telegram", 40);
    tools.powertools().metrics.publishStoredMetrics();
    expect(lines.find((l) => l.outcome === "ok")).toMatchObject({ [METRIC.runsEnded]: 1 });
    expect(lines.find((l) => l.channel === "telegram")).toMatchObject({ [METRIC.webhookAckMs]: 40 });
    expect(lines[lines.length - 1]).toMatchObject({ [METRIC.inputTokens]: 120, [METRIC.outputTokens]: 30, [METRIC.costUsd]: 0.002, [METRIC.laneWaitMs]: 250, [METRIC.timeToFirstTokenMs]: 80, [METRIC.runDurationMs]: 1500 });
  });
});

describe("the entry middleware", () => {
  it("puts the Lambda context and the event's correlation keys on every line, and drops them for the next invocation", async () => {
    vi.stubEnv("POWERTOOLS_DEV", "true");
    vi.stubEnv("POWERTOOLS_LOG_LEVEL", "INFO"); // vitest.config.ts silences logs
    vi.resetModules(); // a fresh Logger that reads the level above
    const { observedHandler } = await import("../../shared/observability/middleware");
    const { createLogger } = await import("../../shared/runtime/app-deps");
    const lines: Record<string, unknown>[] = [];
    const keep = (line: unknown) => void lines.push(JSON.parse(String(line)) as Record<string, unknown>);
    for (const method of ["info", "log", "warn", "error"] as const) vi.spyOn(console, method).mockImplementation(keep);
    const log = createLogger();
    const handler = observedHandler(async (event: { runId?: string }) => {
      log.info("step");
      log.appendKeys?.({ sessionKey: "main", executionArn: "arn:aws:states:eu-west-1:1:execution:m:run_7" });
      log.info("after the run record");
      return event.runId ?? "none";
    });
    const context = { functionName: "AgentRunner-AttemptFn", functionVersion: "$LATEST", invokedFunctionArn: "arn:aws:lambda:eu-west-1:1:function:AgentRunner-AttemptFn", memoryLimitInMB: "1024", awsRequestId: "req-1", getRemainingTimeInMillis: () => 1000 };
    await expect(handler({ runId: "run_7", loop: { attempt: 1 } } as { runId: string }, context as never)).resolves.toBe("run_7");
    await handler({} as { runId?: string }, { ...context, awsRequestId: "req-2" } as never);
    vi.restoreAllMocks();
    const steps = lines.filter((l) => l.message === "step" || l.message === "after the run record");
    expect(steps[0]).toMatchObject({ function_request_id: "req-1", cold_start: expect.any(Boolean), function_name: "AgentRunner-AttemptFn", runId: "run_7", attempt: 2 });
    expect(steps[1]).toMatchObject({ runId: "run_7", attempt: 2, sessionKey: "main", executionArn: "arn:aws:states:eu-west-1:1:execution:m:run_7" });
    expect(steps[2]).toMatchObject({ function_request_id: "req-2" });
    expect(steps[2]).not.toHaveProperty("runId");
    expect(steps[2]).not.toHaveProperty("sessionKey");
  });
});
