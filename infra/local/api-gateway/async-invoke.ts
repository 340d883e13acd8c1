/**
 * API Gateway's asynchronous WebSocket integration (`X-Amz-Invocation-Type:
 * 'Event'`) hands the event to Lambda's async queue: Lambda runs it, and after
 * a function error (a throw, a crash, past its timeout) runs it again up to
 * the function's EventInvokeConfig `MaximumRetryAttempts` (default 2), then
 * gives it to the OnFailure destination. A throttled invocation
 * (TooManyRequestsException) goes back to the queue without using a retry, as
 * Lambda does (it keeps trying for up to the event's maximum age; locally a
 * bounded number of times). AWS waits about 1 then 2 minutes between retries;
 * locally `retryDelayMs`.
 */
import type { InvocationOutcome } from "./invoke";

export interface AsyncRetrySettings {
  /** EventInvokeConfig MaximumRetryAttempts (Lambda's default: 2). */
  maxRetryAttempts: number;
  retryDelayMs: number;
  /** Retries exhausted: the last failure and how many times the function ran (the OnFailure record). */
  onRetriesExhausted?(error: unknown, attempts: number): void;
}

/** How many times a throttled event is put back before it counts as failed (Lambda: up to the event's maximum age). */
export const MAX_THROTTLED_REQUEUES = 20;

export async function invokeAsyncWithRetries<T>(invoke: () => Promise<InvocationOutcome<T>>, settings: AsyncRetrySettings): Promise<void> {
  let failures = 0;
  let throttles = 0;
  for (;;) {
    const outcome = await invoke();
    if (outcome.kind === "returned") return;
    const error = outcome.kind === "threw" ? outcome.error : new Error("Task timed out");
    const throttled = (error as { name?: string })?.name === "TooManyRequestsException" && throttles < MAX_THROTTLED_REQUEUES;
    if (throttled) throttles += 1;
    else failures += 1;
    if (failures > settings.maxRetryAttempts) {
      settings.onRetriesExhausted?.(error, failures);
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, settings.retryDelayMs));
  }
}
