/**
 * The pieces every figure shares: the local stack pointed at the bench model
 * server, and a WebSocket client that drives one run the way a user does
 * (`agent` request, then the streamed events until lifecycle end).
 */
import { performance } from "node:perf_hooks";
import { startLocalStack, type LocalStack, type LocalStackObserver, type LocalStackOptions } from "../infra/local/stack";
import { AgentConfigSchema, type AgentConfig } from "../shared/config/config";
import { TestWsClient, type Frame } from "../test/support/ws-client";
import type { BenchModelServer } from "./model-server";
import { messageFor, type Shape } from "./shapes";
import { CAP_SURFACE_AGENT } from "../shared/protocol/surface";

export const BENCH_MODEL = "openai/bench";
/** How long a client waits for a run's end by default. */
export const RUN_TIMEOUT_MS = 60_000;

export function benchConfig(model: BenchModelServer): AgentConfig {
  return AgentConfigSchema.parse({
    model: BENCH_MODEL,
    providers: { openai: { apiKey: "bench", baseURL: model.baseURL }, anthropic: {} },
  });
}

/** `functionLogs`: where the functions' log lines go (the cost figure counts their bytes: CloudWatch Logs ingestion). */
export function startBenchStack(
  model: BenchModelServer,
  observe?: LocalStackObserver,
  functionLogs?: (fn: string, line: string) => void,
  extra: Pick<LocalStackOptions, "callLatencyMs"> = {},
): Promise<LocalStack> {
  return startLocalStack({ config: benchConfig(model), observe, authToken: "bench-token", ...(functionLogs ? { functionLogs } : {}), ...extra });
}

/** An authenticated WebSocket client (connection setup is never inside a timed window). */
export async function openClient(stack: LocalStack): Promise<TestWsClient> {
  const client = await TestWsClient.open(stack.webSocketUrl);
  // Patient: connection setup is outside every timed window, and a loaded machine answers it slowly.
  // Declares the one view it reads (`agent` events), as our own clients do: one post per streamed update.
  const hello = await client.request("connect", { auth: { token: stack.authToken }, caps: [CAP_SURFACE_AGENT] }, 3 * RUN_TIMEOUT_MS);
  if (!hello.ok) throw new Error(`bench: connect refused: ${JSON.stringify(hello.error)}`);
  return client;
}

export interface RunSpec {
  sessionKey: string;
  shape: Shape;
  runTag: string;
  params?: Record<string, number>;
}

export interface DrivenRun {
  runId: string;
  runTag: string;
  /** Client-side: `agent` request sent -> lifecycle end/error frame received. */
  ms: number;
  /** performance.now() when the request was sent and when the end frame arrived. */
  startedAt: number;
  endedAt: number;
  phase: "end" | "error" | "timeout";
  /** The intake answered `cached: true` (an idempotent repeat: would mean a duplicate). */
  cached: boolean;
}

export const isLifecycleEnd = (runId: string) => (frame: Frame) =>
  frame.type === "event" &&
  frame.event === "agent" &&
  frame.payload?.runId === runId &&
  frame.payload?.stream === "lifecycle" &&
  (frame.payload?.data?.phase === "end" || frame.payload?.data?.phase === "error");

/** `patienceMs`: how long to wait for the end before giving up (`timeout`). */
export async function driveRun(client: TestWsClient, spec: RunSpec, patienceMs = RUN_TIMEOUT_MS): Promise<DrivenRun> {
  const started = performance.now();
  const send = () =>
    client.request(
      "agent",
      { sessionKey: spec.sessionKey, message: messageFor(spec.shape, spec.runTag, spec.params), idempotencyKey: `idem-${spec.runTag}` },
      // A patient caller (the 100-session level) also waits that long for the intake's answer: on a loaded machine it can take over a minute.
      Math.max(RUN_TIMEOUT_MS, patienceMs),
    );
  let res = await send();
  // The key's rate limit (600 requests a minute by default) paces a client that outruns it: a refused
  // request stored nothing, so it is sent again after the wait the answer names, as a well-behaved client would.
  while (!res.ok && res.error?.code === "RATE_LIMITED") {
    await new Promise((resolve) => setTimeout(resolve, Math.max(10, Number(res.error?.details?.retryAfterMs ?? 100))));
    res = await send();
  }
  if (!res.ok) throw new Error(`bench: agent request failed: ${JSON.stringify(res.error)}`);
  const runId = res.payload.runId as string;
  try {
    const end = await client.waitFor(isLifecycleEnd(runId), patienceMs);
    const phase = end.payload.data.phase as "end" | "error";
    const endedAt = performance.now();
    return { runId, runTag: spec.runTag, ms: endedAt - started, startedAt: started, endedAt, phase, cached: res.payload.cached === true };
  } catch {
    const endedAt = performance.now();
    return { runId, runTag: spec.runTag, ms: endedAt - started, startedAt: started, endedAt, phase: "timeout", cached: res.payload.cached === true };
  }
}

/** Lifecycle end/error frames a client received per run (more than one would be a duplicate). */
export function endFramesByRun(clients: readonly TestWsClient[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const client of clients) {
    for (const frame of client.frames) {
      const runId = frame.payload?.runId as string | undefined;
      if (runId && isLifecycleEnd(runId)(frame)) counts.set(runId, (counts.get(runId) ?? 0) + 1);
    }
  }
  return counts;
}

export async function closeAll(clients: readonly TestWsClient[]): Promise<void> {
  await Promise.all(clients.map((client) => client.close()));
}
