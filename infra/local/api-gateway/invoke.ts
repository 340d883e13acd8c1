import type { Context } from "aws-lambda";
import { randomUUID } from "node:crypto";

/** The integration outcome as a value: callers map each kind to AWS's answer. */
export type InvocationOutcome<T> =
  | { kind: "returned"; value: T }
  | { kind: "threw"; error: unknown }
  | { kind: "timedOut" };

/**
 * Runs a handler the way API Gateway waits for a Lambda: past the integration
 * timeout the caller gets an answer, but the handler keeps running (Lambda
 * does not stop a function because its caller gave up). A synchronous throw
 * counts as a failed invocation too.
 */
export async function invokeWithTimeout<T>(run: () => Promise<T>, timeoutMs: number): Promise<InvocationOutcome<T>> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<InvocationOutcome<T>>((resolve) => {
    timer = setTimeout(() => resolve({ kind: "timedOut" }), timeoutMs);
  });
  const settled = Promise.resolve()
    .then(run)
    .then(
      (value): InvocationOutcome<T> => ({ kind: "returned", value }),
      (error: unknown): InvocationOutcome<T> => ({ kind: "threw", error }),
    );
  try {
    return await Promise.race([settled, timedOut]);
  } finally {
    clearTimeout(timer);
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
