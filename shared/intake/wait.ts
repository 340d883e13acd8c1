import { readEvents } from "../aws/event-log";
import { getRun, TERMINAL_STATUSES, type RunRecord } from "../aws/runs";
import type { Db } from "../aws/dynamo";
import { trackLifecycle, waitVerdict, type LifecycleMark } from "../core/lifecycle-wait";
import { ApiError } from "../protocol/errors";

export interface WaitResult {
  runId: string;
  status: "ok" | "error" | "timeout";
  startedAt?: number;
  endedAt?: number;
  error?: string;
}

/**
 * agent.wait: waits (only waits; never stops the run) until the run ends or
 * `timeoutMs` passes. Two sources, polled with backoff:
 * - the run record: a terminal status is final (it is written once, and
 *   nothing restarts an ended run);
 * - the run's lifecycle events: `end` is final, `error` only after the 15 s
 *   grace in which a retry may `start` the same run again (a lifecycle error
 *   emitted by a layer that retries, before the record is terminal).
 */
export async function waitForRun(db: Db, runId: string, timeoutMs: number, signal?: AbortSignal): Promise<WaitResult> {
  const deadline = db.now() + timeoutMs;
  let mark: LifecycleMark | undefined;
  let afterSeq = 0;
  for (let delay = 50; ; delay = Math.min(delay * 2, 1000)) {
    const run = await getRun(db, runId);
    if (!run) throw new ApiError("NOT_FOUND", `run ${runId} not found`);
    if (TERMINAL_STATUSES.has(run.status)) return toWaitResult(run);
    for (const event of await readEvents(db, runId, afterSeq)) {
      mark = trackLifecycle(mark, event);
      afterSeq = event.seq;
    }
    const verdict = waitVerdict(mark, db.now());
    if (verdict.final) {
      const { final: _f, ...rest } = verdict;
      return { runId, ...rest };
    }
    const left = deadline - db.now();
    if (left <= 0 || signal?.aborted) return { runId, status: "timeout", ...(run.startedAt ? { startedAt: run.startedAt } : {}) };
    await new Promise((resolve) => setTimeout(resolve, Math.min(delay, left)));
  }
}

export function toWaitResult(run: RunRecord): WaitResult {
  return {
    runId: run.runId,
    // An aborted run reports `timeout`, as OpenClaw's agent.wait does for `end` with aborted:true.
    status: run.status === "ok" ? "ok" : run.status === "error" ? "error" : "timeout",
    ...(run.startedAt !== undefined ? { startedAt: run.startedAt } : {}),
    ...(run.endedAt !== undefined ? { endedAt: run.endedAt } : {}),
    ...(run.error !== undefined ? { error: run.error } : {}),
  };
}
