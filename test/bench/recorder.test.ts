import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { driveRun, openClient } from "../../bench/harness";
import { UsageRecorder } from "../../bench/recorder";
import { startLocalStack, type LocalStack } from "../../infra/local/stack";
import { loadAgentConfig } from "../../shared/config/config";

let stack: LocalStack;
const recorder = new UsageRecorder({ meter: true });

beforeAll(async () => {
  stack = await startLocalStack({ config: loadAgentConfig({}), observe: recorder.observer() });
});
afterAll(async () => stack?.close());

describe("usage recorder on the local stack (offline model)", () => {
  it("sees one run's invocations, state transitions, execution and metered AWS calls", async () => {
    // Prepare
    const client = await openClient(stack);
    await stack.idle();
    const mark = recorder.mark();
    // Act
    const run = await driveRun(client, { sessionKey: "recorder-1", shape: "one-call", runTag: "rec-1" });
    await stack.idle();
    const usage = recorder.since(mark);
    await client.close();
    // Assess
    expect(run.phase).toBe("end");
    for (const key of ["dispatcher", "attempt"] as const) {
      expect(usage.lambda[key]?.invocations).toBeGreaterThanOrEqual(1);
      expect(usage.lambda[key]?.billedMs).toBeGreaterThanOrEqual(1);
    }
    // A clean run: the first Attempt starts and finalizes it (no StartRun, no FinalizeRun).
    expect(usage.transitionsByState).toMatchObject({ Attempt: 1 });
    expect(usage.transitionsByState.StartRun ?? 0).toBe(0);
    expect(usage.transitionsByState.FinalizeRun ?? 0).toBe(0);
    expect(usage.executionsClosed).toBe(1);
    expect(recorder.executionsByName.get(run.runId)).toBe(1);
    expect(usage.sdk["sfn:StartExecution"]?.calls).toBe(1);
    expect(usage.sdk["sqs:SendMessage"]?.billedRequests).toBe(1);
    expect(usage.sdk["dynamodb:PutItem"]?.writeUnits).toBeGreaterThan(0);
    expect(usage.sdk["dynamodb:GetItem"]?.readUnits).toBeGreaterThan(0);
    expect(usage.sdk["apigw-management:PostToConnection"]?.calls).toBeGreaterThanOrEqual(3);
  });

  it("keeps a sweeper tick that lands inside a window out of the window: the schedule's cost, not the runs'", async () => {
    const client = await openClient(stack);
    await driveRun(client, { sessionKey: "recorder-2", shape: "one-call", runTag: "rec-2" });
    await stack.idle();
    const calls = recorder.sweeperCalls;
    const invocations = recorder.sweeperInvocations;
    const mark = recorder.mark();
    await stack.sweepNow();
    await stack.idle();
    const usage = recorder.since(mark);
    await client.close();
    expect(recorder.sweeperInvocations).toBe(invocations + 1);
    expect(recorder.sweeperCalls, "the tick read the lane registry at least").toBeGreaterThan(calls);
    // The event-source poller's empty receives go on meanwhile (idle cost, counted as the dispatcher's).
    expect(Object.keys(usage.sdk).filter((key) => key !== "sqs:ReceiveMessage")).toEqual([]);
    expect(usage.lambda).toEqual({});
  });
});
