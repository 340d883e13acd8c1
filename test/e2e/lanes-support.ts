/** Shared bits of the lane end-to-end tests (test/e2e/lanes-*.test.ts). */
import type { LocalStack } from "../../infra/local/stack";
import { getRun, type RunRecord } from "../../shared/aws/runs";
import { RUN_END_TIMEOUT_MS } from "../support/timeouts";

export interface Posted {
  status: number;
  body: any;
  sentAt: number;
  answeredAt: number;
}

export async function postAgent(stack: LocalStack, body: Record<string, unknown>): Promise<Posted> {
  const sentAt = Date.now();
  const response = await fetch(`${stack.restUrl}/v1/agent`, {
    method: "POST",
    headers: { authorization: `Bearer ${stack.authToken}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json(), sentAt, answeredAt: Date.now() };
}

/**
 * What a real client does with the gateway's retryable answers: a 429, a 5xx (the authorizer failed,
 * the integration timed out while the intake may still finish) or a dropped connection is sent again
 * with the same idempotency key, so a retry never makes a second run. Any other answer is returned.
 */
export async function postAgentRetrying(stack: LocalStack, body: Record<string, unknown> & { idempotencyKey: string }, maxTries = 6): Promise<Posted & { tries: number }> {
  for (let tries = 1; ; tries += 1) {
    const posted = await postAgent(stack, body).catch((error: unknown) => ({ status: 0, body: { error: String(error) }, sentAt: Date.now(), answeredAt: Date.now() }));
    const retryable = posted.status === 0 || posted.status === 429 || posted.status >= 500;
    if (!retryable || tries >= maxTries) return { ...posted, tries };
    await new Promise((resolve) => setTimeout(resolve, 500 * tries));
  }
}

export async function runsOf(stack: LocalStack, runIds: string[]): Promise<RunRecord[]> {
  return Promise.all(runIds.map(async (id) => (await getRun(stack.deps.db, id))!));
}

/** Waits until every run has ended (the stack's own idle() also waits for queues and executions). */
export async function allEnded(stack: LocalStack, runIds: string[], timeoutMs = RUN_END_TIMEOUT_MS): Promise<RunRecord[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await stack.idle();
    const runs = await runsOf(stack, runIds);
    if (runs.every((run) => ["ok", "error", "timeout", "aborted"].includes(run.status))) return runs;
    if (Date.now() > deadline) throw new Error(`runs still going: ${runs.filter((r) => !["ok", "error", "timeout", "aborted"].includes(r.status)).map((r) => `${r.runId}:${r.status}`).join(", ")}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Most runs executing at one moment: sweep over starts and ends (an end at t frees before a start at t). */
export function maxConcurrency(runs: { startedAt?: number; endedAt?: number }[]): number {
  const points = runs.flatMap((r) => [
    { t: r.startedAt!, d: 1 },
    { t: r.endedAt!, d: -1 },
  ]);
  points.sort((a, b) => a.t - b.t || a.d - b.d);
  let now = 0;
  let max = 0;
  for (const p of points) max = Math.max(max, (now += p.d));
  return max;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}
