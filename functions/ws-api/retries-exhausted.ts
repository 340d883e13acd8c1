import type { SQSBatchItemFailure, SQSBatchResponse, SQSEvent } from "aws-lambda";
import * as z from "zod";
import { deliverFrame } from "../../shared/events/delivery";
import { ApiError } from "../../shared/protocol/errors";
import { errorFrame } from "../../shared/protocol/frames";
import type { AppDeps } from "../../shared/runtime/app-deps";

/**
 * The last word on a frame whose invocation failed every one of Lambda's
 * asynchronous retries (infra/async-invocations.ts): its failure record
 * arrives here from the WsMethodFailures queue, and the client gets an error
 * `res` on its request id instead of silence. The frame is idempotent, so
 * sending it again finishes what the failed tries began.
 *
 * A record that names no method frame (the post-connect step), or whose
 * answer cannot be posted, is reported as a batch item failure: after a few
 * receives the queue's redrive moves it to AsyncFailures, where it is kept.
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
  const failure = FailureRecordSchema.safeParse(parseJson(body));
  const frame = failure.success ? FrameIdSchema.safeParse(parseJson(failure.data.requestPayload.body)) : undefined;
  if (!failure.success || !frame?.success) return false;
  const { connectionId } = failure.data.requestPayload.requestContext;
  const attempts = failure.data.requestContext.approximateInvokeCount;
  deps.log.error("WebSocket method failed on every retry; answering its request id", { connectionId, method: frame.data.method, attempts });
  const error = new ApiError("UNAVAILABLE", RETRIES_EXHAUSTED_MESSAGE, { retryable: true, ...(attempts ? { attempts } : {}) });
  await deliverFrame(deps.pusher, connectionId, errorFrame(frame.data.id, error.toBody()));
  return true;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
