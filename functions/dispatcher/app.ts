import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import middy from "@middy/core";
import { processPartialResponse, SqsFifoPartialProcessorAsync } from "@aws-lambda-powertools/batch";
import { getRun } from "../../shared/aws/runs";
import { RunQueueMessageSchema } from "../../shared/aws/run-queue";
import { admitRun } from "../../shared/lanes/pump";
import type { AppDeps } from "../../shared/runtime/app-deps";

/** A queue message that can never be processed: it fails (and reaches the DLQ) with this reason. */
export class PoisonMessageError extends Error {
  override readonly name = "PoisonMessageError";
}

/**
 * SQS FIFO -> session lane -> Step Functions. Records are processed in order;
 * the first failure short-circuits the rest of its message group (FIFO
 * semantics, Powertools' processor) and only failed ids are reported back.
 */
export function createDispatcherHandler(deps: AppDeps) {
  const processRecord = async (record: SQSRecord): Promise<void> => {
    const parsed = RunQueueMessageSchema.safeParse(safeJson(record.body));
    if (!parsed.success) throw new PoisonMessageError(`message ${record.messageId} is not a run pointer`);
    const run = await getRun(deps.db, parsed.data.runId);
    if (!run) throw new PoisonMessageError(`run ${parsed.data.runId} has no record`);
    const outcome = await admitRun(deps, run);
    deps.log.info("run admitted", { runId: run.runId, sessionKey: run.sessionKey, outcome });
  };
  return middy<SQSEvent, SQSBatchResponse, Error, Context>().handler(async (event, context) => {
    const processor = new SqsFifoPartialProcessorAsync();
    const response = await processPartialResponse(event, processRecord, processor, { context, skipGroupOnError: true, throwOnFullBatchFailure: false });
    for (const failure of response.batchItemFailures) deps.log.warn("dispatch failed", { messageId: failure.itemIdentifier });
    return response;
  });
}

function safeJson(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}
