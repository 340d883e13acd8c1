import type { SQSBatchItemFailure, SQSBatchResponse, SQSEvent } from "aws-lambda";
import * as z from "zod";
import { deliverFrame } from "../../shared/events/delivery";
import { ApiError } from "../../shared/protocol/errors";
import { errorFrame } from "../../shared/protocol/frames";
import type { AppDeps } from "../../shared/runtime/app-deps";
import { closeIfStillAnonymous } from "./auth-deadline";

/**
 * The last word on a frame whose invocation failed every one of Lambda's
 * asynchronous retries (infra/async-invocations.ts): its failure record
 * arrives here from the WsMethodFailures queue, and the client gets an error
 * `res` on its request id instead of silence. The frame is idempotent, so
 * sending it again finishes what the failed tries began.
 *
 * The post-connect step's own record (it failed every retry, so it may never
 * have enforced the auth deadline) closes the socket if it is still
 * anonymous once its deadline has passed: a step that keeps crashing must not
 * leave an unauthenticated socket open until API Gateway's idle timeout.
 *
 * A record that names neither, or whose answer cannot be posted, is reported
 * as a batch item failure: after a few receives the queue's redrive moves it
 * to AsyncFailures, where it is kept.
 */
export function isSqsEvent(event: unknown): event is SQSEvent {
  const records = (event as { Records?: unknown } | undefined)?.Records;
  return Array.isArray(records) && records.every((record) => (record as { eventSource?: unknown })?.eventSource === "aws:sqs");
}

/** Lambda's OnFailure record of an asynchronous invocation: the parts read here. */
const FailureRecordSchema = z.lazy(() => z.object({
  requestContext: z.object({ approximateInvokeCount: z.number().int().optional() }).loose(),
  requestPayload: z.object({
    requestContext: z.object({ connectionId: z.string().min(1), routeKey: z.string() }).loose(),
    body: z.string(),
  }).loose(),
}).loose());

/** The post-connect step's failure record: its payload is the step's event (shared/events/challenge.ts). */
const StepFailureRecordSchema = z.lazy(() => z.object({
  requestPayload: z.object({ agentRunner: z.literal("post-connect"), connectionId: z.string().min(1), ts: z.number() }).loose(),
}).loose());

const FrameIdSchema = z.lazy(() => z.object({ type: z.literal("req"), id: z.string(), method: z.string() }).loose());

export const RETRIES_EXHAUSTED_MESSAGE = "the request failed after its retries; send the same frame again (it is idempotent)";

export async function answerExhaustedFrames(deps: AppDeps, event: SQSEvent): Promise<SQSBatchResponse> {
  const batchItemFailures: SQSBatchItemFailure[] = [];
  for (const record of event.Records) {
    const answered = await answerOne(deps, record.body).catch((error: unknown) => {
      deps.log.warn("could not answer a frame whose retries were exhausted", { messageId: record.messageId, error: String(error) });
      return false;
    });
    if (!answered) batchItemFailures.push({ itemIdentifier: record.messageId });
  }
  return { batchItemFailures };
}

/** True once the client has its answer (or its connection is gone); false: keep the record. */
async function answerOne(deps: AppDeps, body: string): Promise<boolean> {
  const parsed = parseJson(body);
  const step = StepFailureRecordSchema.safeParse(parsed);
  if (step.success) return enforceDeadlineOfFailedStep(deps, step.data.requestPayload);
  const failure = FailureRecordSchema.safeParse(parsed);
  const frame = failure.success ? FrameIdSchema.safeParse(parseJson(failure.data.requestPayload.body)) : undefined;
  if (!failure.success || !frame?.success) return false;
  const { connectionId } = failure.data.requestPayload.requestContext;
  const attempts = failure.data.requestContext.approximateInvokeCount;
  deps.log.error("WebSocket method failed on every retry; answering its request id", { connectionId, method: frame.data.method, attempts });
  const error = new ApiError("UNAVAILABLE", RETRIES_EXHAUSTED_MESSAGE, { retryable: true, ...(attempts ? { attempts } : {}) });
  await deliverFrame(deps.pusher, connectionId, errorFrame(frame.data.id, error.toBody()));
  return true;
}

/** The deadline the failed step did not enforce: waits out what is left of it (nothing, in AWS's minutes of retries), then closes an anonymous socket. */
async function enforceDeadlineOfFailedStep(deps: AppDeps, step: { connectionId: string; ts: number }): Promise<boolean> {
  const closed = await closeIfStillAnonymous(deps, step.connectionId, step.ts);
  deps.log.warn("post-connect step failed on every retry; its auth deadline enforced from the failure record", { connectionId: step.connectionId, closed });
  return true;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
