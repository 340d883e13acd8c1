import { recordHeartbeat } from "../aws/runs";
import type { Db } from "../aws/dynamo";

export interface Heartbeat {
  stop(): void;
}

/**
 * Beats the run's `heartbeatAt` while its attempt works, so the sweeper's
 * stuck-session diagnostics (shared/sweeper/sweep.ts) count a 10-minute tool
 * call or a slow self-hosted model as progress: only a run whose Lambda went
 * silent (died, or hung past every timeout) looks stalled. Live work is
 * bounded by the model idle watchdog, the tool timeout and the Lambda
 * timeout, so a beating attempt is never stuck for long. A failed beat is
 * ignored: the next one, or the events, speak for the run.
 */
export function startHeartbeat(db: Db, runId: string, intervalMs: number, lastProgressAt = 0): Heartbeat {
  let beating = false;
  const beat = () => {
    if (beating) return;
    beating = true;
    recordHeartbeat(db, runId)
      .catch(() => false)
      .finally(() => {
        beating = false;
      });
  };
  // Progress the run record shows from less than an interval ago (the start this same invocation
  // just wrote, or a beat) already speaks for the run: the first beat waits for the interval.
  if (db.now() - lastProgressAt >= intervalMs) beat();
  const timer = setInterval(beat, intervalMs);
  return { stop: () => clearInterval(timer) };
}
