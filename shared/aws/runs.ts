import { GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { keys } from "./keys";
import { conditionally, isConditionFailure, type Db } from "./dynamo";
import { parseRun, RunRecordSchema, type RunRecord, type RunResult, type RunStatus } from "./run-record";

export * from "./run-record";

export async function getRun(db: Db, runId: string, consistent = true): Promise<RunRecord | undefined> {
  const out = await db.doc.send(new GetCommand({ TableName: db.table, Key: keys.run(runId), ConsistentRead: consistent }));
  return parseRun(out.Item, db.now());
}

/** Creates the run record; false when a run with this id already exists (idempotent intake). */
export async function createRun(db: Db, run: RunRecord): Promise<boolean> {
  const item = { ...keys.run(run.runId), ...RunRecordSchema.parse(run) };
  return conditionally(() =>
    db.doc.send(new PutCommand({ TableName: db.table, Item: item, ConditionExpression: "attribute_not_exists(pk)" })),
  );
}

export async function markEnqueued(db: Db, runId: string, seq?: number): Promise<void> {
  await db.doc.send(
    new UpdateCommand({
      TableName: db.table,
      Key: keys.run(runId),
      UpdateExpression: `SET enqueuedAt = if_not_exists(enqueuedAt, :now)${seq !== undefined ? ", seq = if_not_exists(seq, :seq)" : ""}`,
      ConditionExpression: "attribute_exists(pk)",
      ExpressionAttributeValues: { ":now": db.now(), ...(seq !== undefined ? { ":seq": seq } : {}) },
    }),
  );
}

/** Moves accepted -> queued (waiting for its lane); a no-op in any other state. */
export async function markQueued(db: Db, runId: string): Promise<boolean> {
  return conditionally(() =>
    db.doc.send(
      new UpdateCommand({
        TableName: db.table,
        Key: keys.run(runId),
        UpdateExpression: "SET #s = :queued",
        ConditionExpression: "#s = :accepted",
        ExpressionAttributeNames: { "#s": "status" },
        ExpressionAttributeValues: { ":queued": "queued", ":accepted": "accepted" },
      }),
    ),
  );
}

export async function recordExecution(db: Db, runId: string, executionArn: string): Promise<void> {
  await db.doc.send(
    new UpdateCommand({
      TableName: db.table,
      Key: keys.run(runId),
      UpdateExpression: "SET executionArn = :arn",
      ExpressionAttributeValues: { ":arn": executionArn },
    }),
  );
}

/**
 * accepted/queued -> running, once; false if the run already started or
 * ended (a redelivery). `executionArn`: the run's first execution
 * (the dispatcher leaves it to this write); kept when one is already recorded
 * (a re-drive's, written before this execution's start can get here).
 */
export async function markRunning(db: Db, runId: string, startedAt: number, executionArn?: string): Promise<boolean> {
  return conditionally(() => db.doc.send(new UpdateCommand(runningUpdate(db, runId, startedAt, executionArn, false))));
}

/** accepted/queued -> running; `ownExecutionOnly`: also refused while another execution is recorded for the run. */
function runningUpdate(db: Db, runId: string, startedAt: number, executionArn: string | undefined, ownExecutionOnly: boolean) {
  const arnGuard = executionArn && ownExecutionOnly ? " AND (attribute_not_exists(executionArn) OR executionArn = :arn)" : "";
  return {
    TableName: db.table,
    Key: keys.run(runId),
    UpdateExpression: `SET #s = :running, startedAt = :t${executionArn ? ", executionArn = if_not_exists(executionArn, :arn)" : ""}`,
    ConditionExpression: `#s IN (:accepted, :queued)${arnGuard}`,
    ExpressionAttributeNames: { "#s": "status" },
    ExpressionAttributeValues: {
      ":running": "running",
      ":t": startedAt,
      ":accepted": "accepted",
      ":queued": "queued",
      ...(executionArn ? { ":arn": executionArn } : {}),
    },
  };
}

/**
 * A first execution's start: accepted/queued -> running in one write that
 * answers the record (ALL_NEW), so the start reads nothing before it. Held
 * only while no other execution is recorded for the run (`executionArn`
 * absent or this one); undefined when refused: the caller then reads the
 * record and decides as a retry does (already running, ended, or owned by a
 * re-drive).
 */
export async function markFirstStartReturning(db: Db, runId: string, startedAt: number, executionArn?: string): Promise<RunRecord | undefined> {
  try {
    const out = await db.doc.send(new UpdateCommand({ ...runningUpdate(db, runId, startedAt, executionArn, true), ReturnValues: "ALL_NEW" }));
    return parseRun(out.Attributes, db.now());
  } catch (error) {
    if (isConditionFailure(error)) return undefined;
    throw error;
  }
}

/** running -> paused (the run waits for an external input). False when it is no longer running. */
export async function markPaused(db: Db, runId: string): Promise<boolean> {
  return switchStatus(db, runId, "running", "paused");
}

/** paused -> running (the next attempt finishes the waiting call). False when it was not paused. */
export async function markResumed(db: Db, runId: string): Promise<boolean> {
  return switchStatus(db, runId, "paused", "running");
}

async function switchStatus(db: Db, runId: string, from: RunStatus, to: RunStatus): Promise<boolean> {
  return conditionally(() =>
    db.doc.send(
      new UpdateCommand({
        TableName: db.table,
        Key: keys.run(runId),
        // A pause or resume is progress: the stuck-session classification counts from it.
        UpdateExpression: "SET #s = :to, heartbeatAt = :now",
        ConditionExpression: "#s = :from",
        ExpressionAttributeNames: { "#s": "status" },
        ExpressionAttributeValues: { ":to": to, ":from": from, ":now": db.now() },
      }),
    ),
  );
}

/**
 * A running attempt is alive: one small conditional write (1 WRU), never on
 * a run that ended. False when the run is no longer running.
 */
export async function recordHeartbeat(db: Db, runId: string): Promise<boolean> {
  return conditionally(() =>
    db.doc.send(
      new UpdateCommand({
        TableName: db.table,
        Key: keys.run(runId),
        UpdateExpression: "SET heartbeatAt = :now",
        ConditionExpression: "#s = :running",
        ExpressionAttributeNames: { "#s": "status" },
        ExpressionAttributeValues: { ":now": db.now(), ":running": "running" },
      }),
    ),
  );
}

/**
 * The run's transcript changed under it (a `/new` reset, in lane order, after
 * this run was accepted): it writes to the session's current transcript.
 */
export async function setRunSessionId(db: Db, runId: string, sessionId: string): Promise<void> {
  await db.doc.send(
    new UpdateCommand({
      TableName: db.table,
      Key: keys.run(runId),
      UpdateExpression: "SET sessionId = :sid",
      ConditionExpression: "attribute_exists(pk)",
      ExpressionAttributeValues: { ":sid": sessionId },
    }),
  );
}

export async function recordUserEntry(db: Db, runId: string, seq: number): Promise<void> {
  await recordUserEntryReturning(db, runId, seq);
}

/**
 * `recordUserEntry` that answers the record as the write left it
 * (`ReturnValues: ALL_NEW`: no extra read, no extra unit), so the attempt
 * right after the run start in the same invocation need not read it again.
 */
export async function recordUserEntryReturning(db: Db, runId: string, seq: number): Promise<RunRecord | undefined> {
  const out = await db.doc.send(
    new UpdateCommand({
      TableName: db.table,
      Key: keys.run(runId),
      UpdateExpression: "SET userEntrySeq = :seq",
      ExpressionAttributeValues: { ":seq": seq },
      ReturnValues: "ALL_NEW",
    }),
  );
  return parseRun(out.Attributes, db.now());
}

export interface RunEnding {
  status: Extract<RunStatus, "ok" | "error" | "timeout" | "aborted">;
  endedAt: number;
  /** TTL (epoch seconds): the run's retention counted from its end (event-log.ts runRecordExpiry). */
  expiresAt?: number;
  error?: string;
  result?: RunResult;
}

/**
 * Adds the optional error text and result of an ending to an update
 * expression (placeholders `#e`/`:endError`, `#r`/`:endResult`).
 */
export function addEndingDetails(
  ending: { error?: string; result?: RunResult },
  sets: string[],
  names: Record<string, string>,
  values: Record<string, unknown>,
): void {
  if (ending.error !== undefined) {
    sets.push("#e = :endError");
    names["#e"] = "error";
    values[":endError"] = ending.error;
  }
  if (ending.result !== undefined) {
    sets.push("#r = :endResult");
    names["#r"] = "result";
    values[":endResult"] = ending.result;
  }
}

/** Writes the terminal state exactly once; false when the run had already ended. */
export async function markEnded(db: Db, runId: string, ending: RunEnding): Promise<boolean> {
  return (await markEndedReturning(db, runId, ending)) !== undefined;
}

/**
 * `markEnded` that answers the ended record (`ReturnValues: ALL_NEW`, no extra
 * read or unit), so the finalize hands it on instead of reading it again;
 * undefined when the run had ended already.
 */
export async function markEndedReturning(db: Db, runId: string, ending: RunEnding): Promise<RunRecord | undefined> {
  const names: Record<string, string> = { "#s": "status" };
  const values: Record<string, unknown> = {
    ":status": ending.status,
    ":endedAt": ending.endedAt,
    ":ok": "ok",
    ":error": "error",
    ":timeout": "timeout",
    ":aborted": "aborted",
  };
  const sets = ["#s = :status", "endedAt = :endedAt", "startedAt = if_not_exists(startedAt, :endedAt)"];
  if (ending.expiresAt !== undefined) {
    sets.push("expiresAt = :expiresAt");
    values[":expiresAt"] = ending.expiresAt;
  }
  addEndingDetails(ending, sets, names, values);
  let ended: RunRecord | undefined;
  await conditionally(async () => {
    const out = await db.doc.send(
      new UpdateCommand({
        TableName: db.table,
        Key: keys.run(runId),
        UpdateExpression: `SET ${sets.join(", ")}`,
        ConditionExpression: "attribute_exists(pk) AND NOT (#s IN (:ok, :error, :timeout, :aborted))",
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
        ReturnValues: "ALL_NEW",
      }),
    );
    ended = parseRun(out.Attributes, db.now());
  });
  return ended;
}

/**
 * Asks a run to stop. Only a flag: the attempt watching the run aborts its
 * model call and tools at the next boundary, and the state machine finalizes
 * the run as `aborted`. False when the run already ended (or does not exist).
 */
export async function requestAbort(db: Db, runId: string, reason: string): Promise<boolean> {
  return conditionally(() =>
    db.doc.send(
      new UpdateCommand({
        TableName: db.table,
        Key: keys.run(runId),
        UpdateExpression: "SET abortRequestedAt = if_not_exists(abortRequestedAt, :now), abortReason = if_not_exists(abortReason, :reason)",
        ConditionExpression: "attribute_exists(pk) AND NOT (#s IN (:ok, :error, :timeout, :aborted))",
        ExpressionAttributeNames: { "#s": "status" },
        ExpressionAttributeValues: { ":now": db.now(), ":reason": reason, ":ok": "ok", ":error": "error", ":timeout": "timeout", ":aborted": "aborted" },
      }),
    ),
  );
}

/**
 * Ends a run that never started (accepted or queued) as `aborted`, in one
 * conditional write: false when it started meanwhile (then the abort flag
 * stops it) or already ended.
 */
export async function markAbortedBeforeStart(db: Db, runId: string, error: string): Promise<boolean> {
  const now = db.now();
  return conditionally(() =>
    db.doc.send(
      new UpdateCommand({
        TableName: db.table,
        Key: keys.run(runId),
        UpdateExpression: "SET #s = :aborted, endedAt = :now, #e = :error",
        ConditionExpression: "#s IN (:accepted, :queued)",
        ExpressionAttributeNames: { "#s": "status", "#e": "error" },
        ExpressionAttributeValues: { ":aborted": "aborted", ":now": now, ":error": error, ":accepted": "accepted", ":queued": "queued" },
      }),
    ),
  );
}

/**
 * Notes that the requester got its final answer (best effort: at worst a retry posts it again). A
 * small item of its own: an UpdateItem on the ended run record is billed at the record's size, its
 * answer included (6 WRU for a 5 KB answer), where this put is 1. It expires with the run record.
 */
export async function markFinalReplied(db: Db, runId: string, expiresAt?: number): Promise<void> {
  await db.doc.send(
    new PutCommand({
      TableName: db.table,
      Item: { ...keys.finalReplied(runId), v: 1, repliedAt: db.now(), ...(expiresAt !== undefined ? { expiresAt } : {}) },
    }),
  );
}

/** Whether the requester got the run's final answer: the record's own mark (written before the marker item existed) or the marker. */
export async function wasFinalReplied(db: Db, run: Pick<RunRecord, "runId" | "finalRepliedAt">): Promise<boolean> {
  if (run.finalRepliedAt !== undefined) return true;
  const out = await db.doc.send(new GetCommand({ TableName: db.table, Key: keys.finalReplied(run.runId), ConsistentRead: true }));
  return out.Item !== undefined;
}
