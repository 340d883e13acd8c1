/**
 * The outcome of one platform call, classified once (STYLE: retryability
 * decided when the error is created): ok with data, or failed with whether a
 * retry can help and how long the platform asked us to wait.
 */
export type PlatformResult<T> = { ok: true; data: T } | { ok: false; retryable: boolean; retryAfterMs?: number; error: string };

export function failure(status: number, error: string, retryAfterSeconds?: number): PlatformResult<never> {
  const retryable = status === 0 || status === 429 || status >= 500;
  const sane = retryAfterSeconds !== undefined && Number.isFinite(retryAfterSeconds) && retryAfterSeconds >= 0 && retryAfterSeconds <= 300;
  return { ok: false, retryable, ...(sane ? { retryAfterMs: retryAfterSeconds * 1000 } : {}), error };
}

export interface RetryPolicy {
  attempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  sleep(ms: number): Promise<void>;
  /** How long one platform call may take (default http-post.ts's 10 s); the in-request policy's is short. */
  callTimeoutMs?: number;
}

export const DEFAULT_RETRY: RetryPolicy = {
  attempts: 5,
  baseDelayMs: 500,
  maxDelayMs: 8000,
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/** Retries a retryable failure with exponential backoff (or the platform's retry_after). */
export async function withRetry<T>(call: () => Promise<PlatformResult<T>>, policy: RetryPolicy = DEFAULT_RETRY): Promise<PlatformResult<T>> {
  let result = await call();
  for (let attempt = 1; attempt < policy.attempts && !result.ok && result.retryable; attempt++) {
    const backoff = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
    await policy.sleep(result.retryAfterMs ?? backoff);
    result = await call();
  }
  return result;
}
