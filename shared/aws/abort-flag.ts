import { GetCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import * as z from "zod";
import { keys } from "./keys";
import type { Db } from "./dynamo";

const AbortFlagSchema = z.lazy(() => z.object({ abortRequestedAt: z.number().optional(), redriveGeneration: z.number().optional() }));

/**
 * When an abort of the run was requested, if it was: the one attribute a
 * running attempt polls for every second. A projection, so the poll moves
 * and parses a few bytes instead of the whole run record (up to 400 KB with
 * a long message or collect batch). DynamoDB still meters read units by the
 * item's full size; the network, the parse and the Lambda's time are what
 * this saves.
 */
export async function readAbortRequestedAt(db: Db, runId: string): Promise<number | undefined> {
  const out = await db.doc.send(
    new GetCommand({ TableName: db.table, Key: keys.run(runId), ConsistentRead: true, ProjectionExpression: "abortRequestedAt" }),
  );
  return AbortFlagSchema.parse(out.Item ?? {}).abortRequestedAt;
}

/**
 * What a running attempt polls every second: the abort flag, and the run's
 * re-drive generation (a newer one than the attempt started under means its
 * execution died and a re-drive carries the run on). Two attributes, same
 * projection economy as readAbortRequestedAt.
 */
export async function readRunSignals(db: Db, runId: string): Promise<{ abortRequestedAt?: number; redriveGeneration: number }> {
  const out = await db.doc.send(
    new GetCommand({ TableName: db.table, Key: keys.run(runId), ConsistentRead: true, ProjectionExpression: "abortRequestedAt, redriveGeneration" }),
  );
  const flags = AbortFlagSchema.parse(out.Item ?? {});
  return { ...(flags.abortRequestedAt !== undefined ? { abortRequestedAt: flags.abortRequestedAt } : {}), redriveGeneration: flags.redriveGeneration ?? 0 };
}

/** Notes the run's re-drive generation before its re-drive starts (see `redriveGeneration`). */
export async function markRedriven(db: Db, runId: string, generation: number): Promise<void> {
  await db.doc.send(
    new UpdateCommand({
      TableName: db.table,
      Key: keys.run(runId),
      UpdateExpression: "SET redriveGeneration = :g",
      ConditionExpression: "attribute_exists(pk)",
      ExpressionAttributeValues: { ":g": generation },
    }),
  );
}
