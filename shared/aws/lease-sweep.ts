import { GetCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { keys } from "./keys";
import { newestEventItems } from "./event-log";
import { conditionally, type Db } from "./dynamo";

/**
 * Read-only peeks and one cleanup the sweeper needs from items other modules
 * own (the transcript head of shared/aws/transcript.ts, the event log of
 * shared/aws/event-log.ts, read through its own newest-first query); kept here
 * so those modules stay about their own writers.
 */

/**
 * Frees a transcript writer claim whose lease ran out (its Lambda died). A
 * new writer could take it anyway; freeing it keeps "who writes this
 * session" truthful for diagnostics. Conditioned on the same holder and the
 * lease still expired, so a live claim is never touched.
 */
export async function releaseExpiredWriter(db: Db, sessionId: string): Promise<string | undefined> {
  const out = await db.doc.send(new GetCommand({ TableName: db.table, Key: keys.transcriptHead(sessionId), ConsistentRead: true }));
  const holder = out.Item?.writerRunId as string | undefined;
  const leaseUntil = out.Item?.leaseUntil as number | undefined;
  const now = db.now();
  if (!holder || leaseUntil === undefined || leaseUntil >= now) return undefined;
  const released = await conditionally(() =>
    db.doc.send(
      new UpdateCommand({
        TableName: db.table,
        Key: keys.transcriptHead(sessionId),
        UpdateExpression: "REMOVE writerRunId, leaseUntil",
        ConditionExpression: "writerRunId = :run AND leaseUntil < :now",
        ExpressionAttributeValues: { ":run": holder, ":now": now },
      }),
    ),
  );
  return released ? holder : undefined;
}

/** Timestamp of the run's newest event (its last sign of progress), if any. One page is the whole answer: `Limit: 1`, no filter. */
export async function lastEventAt(db: Db, runId: string): Promise<number | undefined> {
  const [newest] = await newestEventItems(db, runId, 1, ["ts"]);
  return newest?.ts as number | undefined;
}
