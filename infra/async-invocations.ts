/**
 * Functions invoked asynchronously (the WebSocket method routes and the
 * `$connect` self-invoke on ws-api; the sweeper by its EventBridge rules):
 * their retry count and failure destination are chosen, not Lambda's
 * defaults (2 retries, events dropped after 6 hours).
 * - ws-api: 2 retries; safe because every method is idempotent (an `agent`
 *   frame without a key gets one from connection + request id). After a few
 *   minutes a retry is pointless (the client has given up or reconnected).
 * - sweeper: no retry; the next tick (every minute) does the same work.
 * An event whose retries are exhausted goes to a queue with Lambda's failure
 * record (condition, error, the request payload): the sweeper's to
 * AsyncFailures, ws-api's to WsMethodFailures, which ws-api itself consumes
 * to answer the frame's request id with an error (functions/ws-api/
 * retries-exhausted.ts) instead of leaving the client without an answer; a
 * record it cannot answer moves on to AsyncFailures (redrive).
 */
import { Duration } from "aws-cdk-lib";
import type { Function as LambdaFn } from "aws-cdk-lib/aws-lambda";
import { SqsDestination } from "aws-cdk-lib/aws-lambda-destinations";
import { SqsEventSource } from "aws-cdk-lib/aws-lambda-event-sources";
import { Queue, QueueEncryption } from "aws-cdk-lib/aws-sqs";
import type { Construct } from "constructs";
import { FUNCTION_SPECS } from "./functions";

export const ASYNC_INVOCATION = {
  "ws-api": { retryAttempts: 2, maxEventAgeSeconds: 10 * 60 },
  sweeper: { retryAttempts: 0, maxEventAgeSeconds: 5 * 60 },
} as const;

/** Receives of a WsMethodFailures record before it moves to AsyncFailures (its answer could not be posted). */
export const WS_FAILURE_MAX_RECEIVES = 3;

export function configureAsyncInvocations(scope: Construct, fns: Record<keyof typeof ASYNC_INVOCATION, LambdaFn>): Queue {
  const failures = new Queue(scope, "AsyncFailures", { encryption: QueueEncryption.SQS_MANAGED, retentionPeriod: Duration.days(14), enforceSSL: true });
  const wsFailures = new Queue(scope, "WsMethodFailures", {
    encryption: QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    // At least the consumer's timeout, or a record being answered is handed out again.
    visibilityTimeout: Duration.seconds(FUNCTION_SPECS["ws-api"].timeoutSeconds * 2),
    deadLetterQueue: { queue: failures, maxReceiveCount: WS_FAILURE_MAX_RECEIVES },
  });
  const destinations: Record<keyof typeof ASYNC_INVOCATION, Queue> = { "ws-api": wsFailures, sweeper: failures };
  for (const [key, settings] of Object.entries(ASYNC_INVOCATION)) {
    fns[key as keyof typeof ASYNC_INVOCATION].configureAsyncInvoke({
      retryAttempts: settings.retryAttempts,
      maxEventAge: Duration.seconds(settings.maxEventAgeSeconds),
      onFailure: new SqsDestination(destinations[key as keyof typeof ASYNC_INVOCATION]),
    });
  }
  fns["ws-api"].addEventSource(new SqsEventSource(wsFailures, { batchSize: 10, reportBatchItemFailures: true }));
  return failures;
}
