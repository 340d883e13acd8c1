import { readAbortRequestedAt } from "../aws/abort-flag";
import type { Db } from "../aws/dynamo";

/** How often a running attempt looks for an abort request (one strongly consistent read of one attribute each time). */
export const ABORT_POLL_MS = 1000;

export interface RunWatch {
  readonly signal: AbortSignal;
  /** Why the watch aborted, if it did. */
  reason(): "abort_requested" | "run_timeout" | undefined;
  stop(): void;
}

/**
 * Aborts the attempt's signal when someone asks the run to stop (a flag on
 * the run record, set by another Lambda) or when the run's own time budget
 * runs out, so a model stream or a tool is cut mid-flight rather than at the
 * end of the attempt.
 */
export function watchRun(db: Db, runId: string, deadline: number | undefined, pollMs = ABORT_POLL_MS): RunWatch {
  const controller = new AbortController();
  let why: "abort_requested" | "run_timeout" | undefined;
  const abort = (reason: "abort_requested" | "run_timeout") => {
    if (controller.signal.aborted) return;
    why = reason;
    controller.abort(reason);
  };
  const budgetTimer = deadline !== undefined ? setTimeout(() => abort("run_timeout"), Math.max(0, deadline - db.now())) : undefined;
  let polling = false;
  const poll = setInterval(() => {
    if (polling) return;
    polling = true;
    readAbortRequestedAt(db, runId)
      .then((requestedAt) => {
        if (requestedAt !== undefined) abort("abort_requested");
      })
      .catch(() => undefined)
      .finally(() => {
        polling = false;
      });
  }, pollMs);
  return {
    signal: controller.signal,
    reason: () => why,
    stop: () => {
      clearInterval(poll);
      if (budgetTimer) clearTimeout(budgetTimer);
    },
  };
}
