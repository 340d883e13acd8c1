/**
 * agent.wait's reading of a run's lifecycle events (OpenClaw agent-job.ts,
 * reference A.5-A.6), pure. `end` is final at once (`aborted: true` reports
 * `timeout`); `error` becomes final only after a grace period in which a
 * retry of the same run may emit `start` again, which cancels it.
 */
export const LIFECYCLE_ERROR_GRACE_MS = 15_000;

export interface LifecycleMark {
  phase: "start" | "end" | "error";
  /** When the event was emitted (the grace counts from here). */
  ts: number;
  startedAt?: number;
  endedAt?: number;
  error?: string;
  aborted?: boolean;
}

export interface LifecycleEventLike {
  stream: string;
  ts: number;
  data: Record<string, unknown>;
}

/** The latest lifecycle phase after `event` (other streams and phases change nothing). */
export function trackLifecycle(mark: LifecycleMark | undefined, event: LifecycleEventLike): LifecycleMark | undefined {
  if (event.stream !== "lifecycle") return mark;
  const phase = event.data.phase;
  if (phase !== "start" && phase !== "end" && phase !== "error") return mark;
  const num = (value: unknown) => (typeof value === "number" ? value : undefined);
  return {
    phase,
    ts: event.ts,
    startedAt: num(event.data.startedAt) ?? mark?.startedAt,
    ...(num(event.data.endedAt) !== undefined ? { endedAt: num(event.data.endedAt) } : {}),
    ...(typeof event.data.error === "string" ? { error: event.data.error } : {}),
    ...(event.data.aborted === true ? { aborted: true } : {}),
  };
}

export type WaitVerdict =
  | { final: true; status: "ok" | "error" | "timeout"; startedAt?: number; endedAt?: number; error?: string }
  | { final: false };

export function waitVerdict(mark: LifecycleMark | undefined, now: number, graceMs = LIFECYCLE_ERROR_GRACE_MS): WaitVerdict {
  if (!mark || mark.phase === "start") return { final: false };
  const times = { ...(mark.startedAt !== undefined ? { startedAt: mark.startedAt } : {}), ...(mark.endedAt !== undefined ? { endedAt: mark.endedAt } : {}) };
  if (mark.phase === "end") return { final: true, status: mark.aborted ? "timeout" : "ok", ...times };
  if (now - mark.ts < graceMs) return { final: false };
  return { final: true, status: "error", ...times, ...(mark.error !== undefined ? { error: mark.error } : {}) };
}
