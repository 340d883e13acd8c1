import type { Context } from "aws-lambda";
import { randomUUID } from "node:crypto";

/** The integration outcome as a value: callers map each kind to AWS's answer. */
export type InvocationOutcome<T> =
  | { kind: "returned"; value: T }
  | { kind: "threw"; error: unknown }
  | { kind: "timedOut" };

/**
 * What a local integration tells the gateway's timer about its invocation.
 * Locally a function has a bounded number of sandboxes (its reserved
 * concurrency, else the local cap), and an invocation past them waits in the
 * pool for one; in AWS that invocation would get its own execution
 * environment at once (or a 429, never a silent wait). Time spent waiting for
 * a sandbox is the local machine's, not the integration's, so the timer does
 * not count it: `queued()` pauses it, `started()` resumes it.
 */
export interface InvocationProgress {
  queued(): void;
  started(): void;
}

/**
 * Runs a handler the way API Gateway waits for a Lambda: past the integration
 * timeout the caller gets an answer, but the handler keeps running (Lambda
 * does not stop a function because its caller gave up). A synchronous throw
 * counts as a failed invocation too. The timeout counts only the time the
 * invocation is not queued for a local sandbox (InvocationProgress).
 */
export async function invokeWithTimeout<T>(run: (progress: InvocationProgress) => Promise<T>, timeoutMs: number): Promise<InvocationOutcome<T>> {
  const timer = new PausableTimer(timeoutMs);
  const settled = Promise.resolve()
    .then(() => run(timer))
    .then(
      (value): InvocationOutcome<T> => ({ kind: "returned", value }),
      (error: unknown): InvocationOutcome<T> => ({ kind: "threw", error }),
    );
  try {
    return await Promise.race([settled, timer.expired.then((): InvocationOutcome<T> => ({ kind: "timedOut" }))]);
  } finally {
    timer.stop();
  }
}

/** A countdown that stands still while the invocation is queued. */
class PausableTimer implements InvocationProgress {
  readonly expired: Promise<void>;
  private fire!: () => void;
  private handle: NodeJS.Timeout | undefined;
  private runningSince = 0;
  private waits = 0;

  constructor(private remainingMs: number) {
    this.expired = new Promise<void>((resolve) => (this.fire = resolve));
    this.resume();
  }

  queued(): void {
    this.waits += 1;
    if (this.waits !== 1 || this.handle === undefined) return;
    clearTimeout(this.handle);
    this.handle = undefined;
    this.remainingMs -= Date.now() - this.runningSince;
  }

  started(): void {
    if (this.waits === 0) return;
    this.waits -= 1;
    if (this.waits === 0) this.resume();
  }

  stop(): void {
    clearTimeout(this.handle);
    this.handle = undefined;
    this.waits = Number.POSITIVE_INFINITY;
  }

  private resume(): void {
    this.runningSince = Date.now();
    this.handle = setTimeout(this.fire, Math.max(0, this.remainingMs));
  }
}

const LOCAL_ACCOUNT_ID = "000000000000";

/** A Lambda-like context whose remaining time counts down from the invocation. */
export function defaultLambdaContext(functionName: string, timeoutMs: number): Context {
  const deadline = Date.now() + timeoutMs;
  const region = process.env.AWS_REGION ?? "us-east-1";
  const unsupported = (): never => {
    throw new Error("Legacy context callbacks are not supported locally; return a promise");
  };
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: "$LATEST",
    invokedFunctionArn: `arn:aws:lambda:${region}:${LOCAL_ACCOUNT_ID}:function:${functionName}`,
    memoryLimitInMB: "1024",
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: `local/[$LATEST]${randomUUID().replaceAll("-", "")}`,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: unsupported,
    fail: unsupported,
    succeed: unsupported,
  };
}
