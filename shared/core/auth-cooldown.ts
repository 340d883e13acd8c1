import type { FailureKind } from "./failures";

/**
 * Auth-profile health (reference §G.74, docs/concepts/model-failover): a
 * profile that failed cools down so that every run skips it for a while,
 * not only the run that saw the failure. Pure arithmetic over one record.
 *
 *   transient failures  30 s -> 1 min -> 5 min (cap), by errors in the window
 *   billing             disabled 5 h, doubling per repeat, capped at 24 h
 *   permanent auth      disabled 10 min, doubling per repeat, capped at 60 min
 *   counters reset when the last failure is older than the 24 h window
 *   rate-limit cooldowns are per model: the same key may still serve another model
 */
export const COOLDOWN = {
  steps: [30_000, 60_000, 300_000],
  failureWindowMs: 24 * 3600_000,
  billingBaseMs: 5 * 3600_000,
  billingMaxMs: 24 * 3600_000,
  authPermanentBaseMs: 10 * 60_000,
  authPermanentMaxMs: 60 * 60_000,
} as const;

export interface ProfileHealth {
  errorCount: number;
  lastFailureAt?: number;
  lastFailureReason?: FailureKind;
  cooldownUntil?: number;
  /** Set when the cooldown only applies to one model (rate limits). */
  cooldownModel?: string;
  disabledUntil?: number;
  disabledReason?: "billing" | "auth_permanent";
  billingFailures: number;
  authPermanentFailures: number;
}

export const HEALTHY: Readonly<ProfileHealth> = Object.freeze({ errorCount: 0, billingFailures: 0, authPermanentFailures: 0 });

export function recordProfileFailure(health: ProfileHealth | undefined, reason: FailureKind, model: string, now: number): ProfileHealth {
  const base = withinWindow(health, now) ? { ...health! } : { ...HEALTHY };
  const next: ProfileHealth = { ...base, lastFailureAt: now, lastFailureReason: reason };
  if (reason === "billing") {
    next.billingFailures = base.billingFailures + 1;
    return disable(next, "billing", doubled(COOLDOWN.billingBaseMs, next.billingFailures, COOLDOWN.billingMaxMs), now);
  }
  if (reason === "auth_permanent") {
    next.authPermanentFailures = base.authPermanentFailures + 1;
    return disable(next, "auth_permanent", doubled(COOLDOWN.authPermanentBaseMs, next.authPermanentFailures, COOLDOWN.authPermanentMaxMs), now);
  }
  next.errorCount = base.errorCount + 1;
  const step = COOLDOWN.steps[Math.min(next.errorCount, COOLDOWN.steps.length) - 1];
  next.cooldownUntil = Math.max(now + step, base.cooldownUntil ?? 0);
  if (reason === "rate_limit") next.cooldownModel = model;
  else delete next.cooldownModel;
  return next;
}

/** Whether the profile must be skipped for `model` at `now`. */
export function isCoolingDown(health: ProfileHealth | undefined, model: string, now: number): boolean {
  if (!health) return false;
  if (health.disabledUntil !== undefined && health.disabledUntil > now) return true;
  if (health.cooldownUntil === undefined || health.cooldownUntil <= now) return false;
  return health.cooldownModel === undefined || health.cooldownModel === model;
}

/** When the profile becomes usable for `model` again (now when it is usable). */
export function usableAt(health: ProfileHealth | undefined, model: string, now: number): number {
  if (!isCoolingDown(health, model, now)) return now;
  return Math.max(health!.disabledUntil ?? 0, health!.cooldownUntil ?? 0);
}

export interface ProfileChoice {
  profileId: string;
  /** Every candidate was cooling down: this is the one that recovers first. */
  coolingDown: boolean;
}

/**
 * The profile an attempt uses: the pinned one if any, else the first in
 * configured order that is neither tried by this run nor cooling down. When
 * all untried ones cool down, the one that recovers first (the caller decides
 * whether a fallback model is the better choice). `failed`: profiles whose
 * key failed authentication or billing earlier in this run, on any model:
 * taken only when nothing else is left.
 */
export function chooseProfile(
  order: readonly string[],
  health: ReadonlyMap<string, ProfileHealth>,
  opts: { pinned?: string; tried: readonly string[]; failed?: readonly string[]; model: string; now: number },
): ProfileChoice | undefined {
  if (opts.pinned && order.includes(opts.pinned)) return { profileId: opts.pinned, coolingDown: false };
  const untried = order.filter((id) => !opts.tried.includes(id));
  const pool = untried.length > 0 ? untried : [...order];
  const usable = pool.filter((id) => !opts.failed?.includes(id));
  const candidates = usable.length > 0 ? usable : pool;
  if (candidates.length === 0) return undefined;
  const ready = candidates.find((id) => !isCoolingDown(health.get(id), opts.model, opts.now));
  if (ready) return { profileId: ready, coolingDown: false };
  const soonest = [...candidates].sort((a, b) => usableAt(health.get(a), opts.model, opts.now) - usableAt(health.get(b), opts.model, opts.now))[0];
  return { profileId: soonest, coolingDown: true };
}

function withinWindow(health: ProfileHealth | undefined, now: number): boolean {
  return health?.lastFailureAt !== undefined && now - health.lastFailureAt <= COOLDOWN.failureWindowMs;
}

function doubled(base: number, failures: number, cap: number): number {
  return Math.min(cap, base * 2 ** Math.max(0, failures - 1));
}

function disable(health: ProfileHealth, reason: "billing" | "auth_permanent", ms: number, now: number): ProfileHealth {
  return { ...health, disabledUntil: Math.max(now + ms, health.disabledUntil ?? 0), disabledReason: reason };
}
