/**
 * Stuck-session diagnostics (OpenClaw `logging/diagnostic.ts`, reference
 * section O), as a pure classification of what the sweeper saw:
 *  - session.long_running: the run works and reports progress, it is just long;
 *  - session.stalled:      the run is active but has reported no progress for
 *                          the warn threshold; past the abort threshold it is
 *                          aborted so the queued work can go on;
 *  - session.stuck:        the lane's bookkeeping says busy but no work is
 *                          active (the run ended or its execution died): the
 *                          lane is released at once.
 */
export type StuckKind = "session.long_running" | "session.stalled" | "session.stuck";

export interface RunningObservation {
  now: number;
  startedAt: number;
  /** Last sign of life: an event, a start, an attempt. */
  lastProgressAt: number;
  warnMs: number;
  abortMs: number;
  /** An abort was already requested (by us or anyone). */
  abortRequested: boolean;
}

export type RunningVerdict =
  | { kind: "ok" }
  | { kind: "session.long_running"; ageMs: number }
  | { kind: "session.stalled"; idleMs: number; abort: boolean };

export function classifyRunning(o: RunningObservation): RunningVerdict {
  const idleMs = Math.max(0, o.now - o.lastProgressAt);
  if (idleMs >= o.warnMs) return { kind: "session.stalled", idleMs, abort: idleMs >= o.abortMs && !o.abortRequested };
  const ageMs = Math.max(0, o.now - o.startedAt);
  if (ageMs >= o.warnMs) return { kind: "session.long_running", ageMs };
  return { kind: "ok" };
}

/**
 * Repeated warnings back off exponentially without stored state: a
 * condition that has lasted `ageMs` is reported on the sweep that first sees
 * it pass warn, 2x warn, 4x warn, ... (`intervalMs` = time between sweeps).
 */
export function shouldReport(ageMs: number, warnMs: number, intervalMs: number): boolean {
  if (ageMs < warnMs) return false;
  const threshold = warnMs * 2 ** Math.floor(Math.log2(ageMs / warnMs));
  return ageMs - threshold < intervalMs;
}
