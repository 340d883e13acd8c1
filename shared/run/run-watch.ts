import { readRunSignals } from "../aws/abort-flag";
import type { Db } from "../aws/dynamo";

/** How often a running attempt looks for an abort request (one strongly consistent read of one attribute each time). */
export const ABORT_POLL_MS = 1000;

export interface RunWatch {
  readonly signal: AbortSignal;
  /** Why the watch aborted, if it did. */
  reason(): WatchReason | undefined;
  stop(): void;
}

/**
 * `superseded`: the sweeper re-drove the run (its execution died of the
 * service, this Lambda did not): the re-drive carries the run on, so this
 * attempt must stop without a durable effect (no decision, no finalize).
 */
export type WatchReason = "abort_requested" | "run_timeout" | "superseded";

/** The attempt's signal was aborted because a re-drive superseded it (the reason travels as the signal's `reason`). */
export function isSuperseded(signal: AbortSignal): boolean {
  return signal.aborted && signal.reason === "superseded";
}

/**
 * Aborts the attempt's signal when someone asks the run to stop (a flag on
 * the run record, set by another Lambda), when the run's own time budget
 * runs out, or when a re-drive superseded this attempt's execution
 * (`generation`: the run's redriveGeneration this attempt started under), so
 * a model stream or a tool is cut mid-flight rather than at the end of the
 * attempt.
 */
export function watchRun(db: Db, runId: string, deadline: number | undefined, pollMs = ABORT_POLL_MS, generation = 0): RunWatch {
  const controller = new AbortController();
  let why: WatchReason | undefined;
  const abort = (reason: WatchReason) => {
    if (controller.signal.aborted) return;
    why = reason;
    controller.abort(reason);
  };
  const budgetTimer = deadline !== undefined ? setTimeout(() => abort("run_timeout"), Math.max(0, deadline - db.now())) : undefined;
  let polling = false;
  const poll = setInterval(() => {
    if (polling) return;
    polling = true;
    readRunSignals(db, runId)
      .then((signals) => {
        if (signals.redriveGeneration > generation) abort("superseded");
        else if (signals.abortRequestedAt !== undefined) abort("abort_requested");
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
