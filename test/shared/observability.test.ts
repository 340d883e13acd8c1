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
