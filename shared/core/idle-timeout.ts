/**
 * The model idle watchdog's window (reference §N.115, seed 001 "Tiempos de
 * espera"): the configured idle window (120 s by default, 0 disables it); a
 * provider's `timeoutSeconds` may extend it for slow self-hosted models; but
 * the run's own remaining budget always caps it, because that budget governs
 * the whole run.
 */
export interface IdleTimeoutInput {
  idleTimeoutSeconds: number;
  providerTimeoutSeconds?: number;
  /** Milliseconds left of the run's budget; undefined = unlimited. */
  runRemainingMs?: number;
}

/** Smallest window we ever arm: a near-expired run still gets one meaningful read. */
export const MIN_IDLE_WINDOW_MS = 1000;

export function resolveIdleTimeoutMs(input: IdleTimeoutInput): number | undefined {
  if (input.idleTimeoutSeconds <= 0) return undefined;
  const configured = input.idleTimeoutSeconds * 1000;
  const extended = input.providerTimeoutSeconds ? Math.max(configured, input.providerTimeoutSeconds * 1000) : configured;
  if (input.runRemainingMs === undefined) return extended;
  return Math.max(MIN_IDLE_WINDOW_MS, Math.min(extended, input.runRemainingMs));
}
