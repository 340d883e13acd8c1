import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import middy from "@middy/core";
import { recordDispatchFailure } from "../../shared/aws/dispatch-failures";
import { readRunAndLane } from "../../shared/aws/read-together";
import { getRun } from "../../shared/aws/runs";
import { RunQueueMessageSchema } from "../../shared/aws/run-queue";
import { admitRun } from "../../shared/lanes/pump";
import type { AppDeps } from "../../shared/runtime/app-deps";
import { PoisonMessageError } from "./errors";

export { PoisonMessageError } from "./errors";

/**
 * SQS FIFO -> session lane -> Step Functions. Intake already put the run in
 * its lane; the dispatcher makes sure it is there and pumps the lane (which
 * starts the run when it is its turn). Records of one message group (one
 * session) are processed in order and the first failure short-circuits the
 * rest of its group (FIFO semantics); different groups of a batch are
 * processed at once, so a batch of ten sessions costs about one admission,
 * not ten in a row (Powertools' FIFO processor runs the whole batch one
 * record at a time, which under load pushed batches past the timeout and
 * into redelivery). Only failed ids are reported back.
 * Every failure is recorded under the message id before SQS sees it, so the
 * message that finally lands in the DLQ has its reason in the table.
 */
export function createDispatcherHandler(deps: AppDeps) {
  const admit = async (record: SQSRecord): Promise<string | undefined> => {
    const parsed = RunQueueMessageSchema.safeParse(safeJson(record.body));
    if (!parsed.success) throw new PoisonMessageError(`message ${record.messageId} is not a run pointer`);
    // The run and its lane in one request: the message group is the session key (shared/aws/run-queue.ts).
    // The lane read is used only when it is the run's own lane.
    const groupKey = record.attributes.MessageGroupId;
    const read = groupKey ? await readRunAndLane(deps.db, parsed.data.runId, groupKey) : { run: await getRun(deps.db, parsed.data.runId), lane: undefined };
    const run = read.run;
    if (!run) throw new PoisonMessageError(`run ${parsed.data.runId} has no record`);
    const outcome = await admitRun(deps, run, run.sessionKey === groupKey ? read.lane : undefined);
    deps.log.info("run admitted", { runId: run.runId, sessionKey: run.sessionKey, outcome });
    return run.runId;
  };
  const processRecord = async (record: SQSRecord): Promise<void> => {
    try {
      await admit(record);
    } catch (error) {
      await recordFailure(deps, record, error);
      throw error;
    }
  };
  return middy<SQSEvent, SQSBatchResponse, Error, Context>().handler(async (event) => {
    const failed = await Promise.all([...byMessageGroup(event.Records).values()].map((records) => processGroup(records, processRecord)));
    const batchItemFailures = failed.flat().map((itemIdentifier) => ({ itemIdentifier }));
    for (const failure of batchItemFailures) deps.log.warn("dispatch failed", { messageId: failure.itemIdentifier });
    return { batchItemFailures };
  });
}

/** The batch's records by message group, each group in its arrival order. */
function byMessageGroup(records: readonly SQSRecord[]): Map<string, SQSRecord[]> {
  const groups = new Map<string, SQSRecord[]>();
  for (const record of records) {
    const group = record.attributes.MessageGroupId ?? record.messageId;
    const list = groups.get(group);
    if (list) list.push(record);
    else groups.set(group, [record]);
  }
  return groups;
}

/** In order; after a failure the rest of the group is not tried (it would overtake the failed one): all of them are reported failed. */
async function processGroup(records: readonly SQSRecord[], process: (record: SQSRecord) => Promise<void>): Promise<string[]> {
  for (const [index, record] of records.entries()) {
    try {
      await process(record);
    } catch {
      return records.slice(index).map((r) => r.messageId);
    }
  }
  return [];
}

async function recordFailure(deps: AppDeps, record: SQSRecord, error: unknown): Promise<void> {
  const pointer = RunQueueMessageSchema.safeParse(safeJson(record.body));
  const failed = {
    messageId: record.messageId,
    groupId: record.attributes.MessageGroupId,
    ...(pointer.success ? { runId: pointer.data.runId } : {}),
    receiveCount: Number(record.attributes.ApproximateReceiveCount ?? 1),
  };
  deps.log.error("dispatch failure", { ...failed, error: String(error) });
  // The reason is best effort: if the table itself is down, SQS still retries and redrives.
  await recordDispatchFailure(deps.db, failed, error).catch((why: unknown) => {
    deps.log.error("could not record the dispatch failure", { messageId: record.messageId, error: String(why) });
  });
}

function safeJson(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}
