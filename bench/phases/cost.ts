/**
 * Figure 3: AWS cost per run from what runs of each shape actually did, on a
 * metered stack. K runs of a shape form one window (sequential, each in a
 * fresh session on its own already-connected client; the rate-limited shape
 * runs its K concurrently because each one waits in the state machine's Wait
 * state); the window's usage divided by K is the usage of one run, priced by
 * bench/prices.ts. Connection setup is measured apart: it is per client,
 * not per run.
 */
import type { LocalStack } from "../../infra/local/stack";
import type { TestWsClient } from "../../test/support/ws-client";
import { configuredMemory, costOfRun, costPerModelSecond, scaleBreakdown, usagePerRun, type CostBreakdown, type RunUsage } from "../cost";
import { closeAll, driveRun, openClient, type DrivenRun } from "../harness";
import { modelLatency, type LatencyModel } from "../latency-model";
import { observabilityCost, type ObservabilityCost } from "../observability-cost";
import { PRICES } from "../prices";
import type { TimedEvent, UsageRecorder, WindowUsage } from "../recorder";
import { COST_SHAPES, type Shape } from "../shapes";

export interface ShapeCost {
  shape: Shape;
  runs: number;
  failures: number;
  window: WindowUsage;
  usagePerRun: RunUsage;
  per1000Runs: CostBreakdown;
  /** DynamoDB requests per run (every call, refused conditional writes included). */
  dynamoRequestsPerRun: number;
  /** CloudWatch Logs (function lines measured, the rest modelled) and X-Ray (modelled) per run. */
  observability: ObservabilityCost;
  /** Sequential shapes only: the AWS latency model over each run's critical path. */
  latency?: LatencyModel;
  /** Client-side run time on this (metered) stack, mean over the window. */
  localRunMs: number;
}

export interface CostResult {
  shapes: ShapeCost[];
  /** One client connecting and authenticating (`$connect` + `connect`), priced alone. */
  perConnection: { window: WindowUsage; usage: RunUsage; per1000Connections: CostBreakdown };
  memoryMb: Record<string, number>;
  per1000RunsPerModelSecond: number;
  langGraphPer1000Runs: number;
}

export async function measureCost(stack: LocalStack, recorder: UsageRecorder, options: { runs: number; warmup: number; concurrentRetries: number }): Promise<CostResult> {
  const memory = configuredMemory();
  const clients: TestWsClient[] = [];
  try {
    const perConnection = await measureConnection(stack, recorder, clients);
    const shapes: ShapeCost[] = [];
    for (const shape of COST_SHAPES) {
      const concurrent = shape === "retry-429";
      const runs = concurrent ? options.concurrentRetries : options.runs;
      // The rate-limited shape needs no warm-up of its own (10 s each): the stack is warm by then.
      const warmup = concurrent ? 0 : options.warmup;
      for (let w = 0; w < warmup; w += 1) await runBatch(await connectAll(stack, clients, 1), shape, `cw${w}`, false);
      const batch = await connectAll(stack, clients, runs);
      const mark = recorder.mark();
      const driven = await runBatch(batch, shape, "c", concurrent);
      await stack.idle();
      const window = recorder.since(mark);
      const connectionMinutes = driven.reduce((sum, run) => sum + run.ms, 0) / 60_000;
      const usage = usagePerRun(window, runs, { inboundMessages: runs, connectionMinutes });
      const invocations = Object.values(usage.lambda).reduce((sum, tally) => sum + (tally?.invocations ?? 0), 0);
      const logBytes = Object.values(window.logs).reduce((sum, tally) => sum + (tally?.bytes ?? 0), 0) / runs;
      shapes.push({
        dynamoRequestsPerRun: dynamoRequests(window) / runs,
        observability: observabilityCost({ functionLogBytes: logBytes, invocations, apiRequests: 1 }, PRICES),
        ...(concurrent ? {} : { latency: modelLatency(driven.map((run) => criticalPath(recorder, run))) }),
        localRunMs: driven.reduce((sum, run) => sum + run.ms, 0) / runs,
        shape,
        runs,
        failures: driven.filter((run) => run.phase !== "end").length,
        window,
        usagePerRun: usage,
        per1000Runs: scaleBreakdown(costOfRun(usage, memory, PRICES), 1000),
      });
    }
    return {
      shapes,
      perConnection,
      memoryMb: memory as Record<string, number>,
      per1000RunsPerModelSecond: costPerModelSecond(memory, PRICES) * 1000,
      langGraphPer1000Runs: PRICES.langGraphPerRun * 1000,
    };
  } finally {
    await closeAll(clients);
  }
}

/** Clients are connected before a window opens: connecting is per client, not per run. */
async function connectAll(stack: LocalStack, clients: TestWsClient[], count: number): Promise<TestWsClient[]> {
  const fresh: TestWsClient[] = [];
  for (let i = 0; i < count; i += 1) fresh.push(await openClient(stack));
  clients.push(...fresh);
  await stack.idle();
  // The async `connect` invocations must finish before the window opens.
  await new Promise((resolve) => setTimeout(resolve, 200));
  return fresh;
}

async function runBatch(batch: TestWsClient[], shape: Shape, prefix: string, concurrent: boolean): Promise<DrivenRun[]> {
  const drive = (client: TestWsClient, i: number) => {
    const tag = `cost-${shape}-${prefix}${String(i).padStart(3, "0")}`;
    return driveRun(client, { sessionKey: `bench-${tag}`, shape, runTag: tag });
  };
  if (concurrent) return Promise.all(batch.map(drive));
  const out: DrivenRun[] = [];
  for (const [i, client] of batch.entries()) out.push(await drive(client, i));
  return out;
}

async function measureConnection(stack: LocalStack, recorder: UsageRecorder, clients: TestWsClient[]) {
  await stack.idle();
  const mark = recorder.mark();
  clients.push(await openClient(stack));
  await stack.idle();
  // Give the async `connect` invocation time to return after its answer was posted.
  await new Promise((resolve) => setTimeout(resolve, 200));
  const window = recorder.since(mark);
  // The client sent one frame (`connect`); `$connect` is the upgrade, not a message.
  const usage = usagePerRun(window, 1, { inboundMessages: 1, connectionMinutes: 0 });
  return { window, usage, per1000Connections: scaleBreakdown(costOfRun(usage, configuredMemory(), PRICES), 1000) };
}

function dynamoRequests(window: WindowUsage): number {
  return Object.entries(window.sdk)
    .filter(([key]) => key.startsWith("dynamodb:"))
    .reduce((sum, [, tally]) => sum + tally.calls, 0);
}

/**
 * What finished between the run's request and its end frame. The event-source
 * poller's receives are polling, not the run (most come back empty): exactly
 * one receive, the one that delivered the run's message, is on its path.
 */
function criticalPath(recorder: UsageRecorder, run: DrivenRun): TimedEvent[] {
  const calls = recorder.timelineBetween(run.startedAt, run.endedAt).filter((event) => event.what !== "sqs:ReceiveMessage");
  return [...calls, { at: run.startedAt, what: "sqs:ReceiveMessage" }];
}
