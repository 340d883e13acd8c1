/**
 * Functions invoked asynchronously (the WebSocket method routes and the
 * `$connect` self-invoke on ws-api; the sweeper by its EventBridge rules):
 * their retry count and failure destination are chosen, not Lambda's
 * defaults (2 retries, events dropped after 6 hours).
 * - ws-api: 2 retries; safe because every method is idempotent (an `agent`
 *   frame without a key gets one from connection + request id). After a few
 *   minutes a retry is pointless (the client has given up or reconnected).
 * - sweeper: no retry; the next tick (every minute) does the same work.
 * An event whose retries are exhausted goes to the AsyncFailures queue with
 * Lambda's failure record (condition, error, the request payload).
 */
import { Duration } from "aws-cdk-lib";
import type { Function as LambdaFn } from "aws-cdk-lib/aws-lambda";
import { SqsDestination } from "aws-cdk-lib/aws-lambda-destinations";
import { Queue, QueueEncryption } from "aws-cdk-lib/aws-sqs";
import type { Construct } from "constructs";

export const ASYNC_INVOCATION = {
  "ws-api": { retryAttempts: 2, maxEventAgeSeconds: 10 * 60 },
  sweeper: { retryAttempts: 0, maxEventAgeSeconds: 5 * 60 },
} as const;

export function configureAsyncInvocations(scope: Construct, fns: Record<keyof typeof ASYNC_INVOCATION, LambdaFn>): Queue {
  const failures = new Queue(scope, "AsyncFailures", { encryption: QueueEncryption.SQS_MANAGED, retentionPeriod: Duration.days(14), enforceSSL: true });
  for (const [key, settings] of Object.entries(ASYNC_INVOCATION)) {
    fns[key as keyof typeof ASYNC_INVOCATION].configureAsyncInvoke({
      retryAttempts: settings.retryAttempts,
      maxEventAge: Duration.seconds(settings.maxEventAgeSeconds),
      onFailure: new SqsDestination(failures),
    });
  }
  return failures;
}
