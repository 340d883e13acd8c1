import { GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { z } from "zod";
import { keys } from "./keys";
import { conditionally, type Db } from "./dynamo";
import { newSessionId } from "../core/ids";

/** Session metadata, schema version 1: the stable key and the transcript it currently points at. */
export const SessionRecordSchema = z.object({
  v: z.literal(1),
  sessionKey: z.string(),
  sessionId: z.string(),
  createdAt: z.number(),
  updatedAt: z.number(),
  lastRunId: z.string().optional(),
});
export type SessionRecord = z.infer<typeof SessionRecordSchema>;

function parseSession(item: Record<string, unknown> | undefined): SessionRecord | undefined {
  if (!item) return undefined;
  const { pk: _pk, sk: _sk, ...rest } = item;
  return SessionRecordSchema.parse(rest);
}

export async function getSession(db: Db, sessionKey: string): Promise<SessionRecord | undefined> {
  const out = await db.doc.send(
    new GetCommand({ TableName: db.table, Key: keys.session(sessionKey), ConsistentRead: true }),
  );
  return parseSession(out.Item);
}

/**
 * sessionKey -> sessionId, race-free: the first writer's conditional put wins and
 * every concurrent first message reads the winner's id back.
 */
export async function resolveSession(db: Db, sessionKey: string): Promise<SessionRecord> {
  const existing = await getSession(db, sessionKey);
  if (existing) return existing;
  const now = db.now();
  const fresh: SessionRecord = { v: 1, sessionKey, sessionId: newSessionId(), createdAt: now, updatedAt: now };
  const created = await conditionally(() =>
    db.doc.send(
      new PutCommand({
        TableName: db.table,
        Item: { ...keys.session(sessionKey), ...fresh },
        ConditionExpression: "attribute_not_exists(pk)",
      }),
    ),
  );
  if (created) return fresh;
  const winner = await getSession(db, sessionKey);
  if (!winner) throw new Error(`session ${sessionKey} vanished while resolving`);
  return winner;
}

export async function touchSession(db: Db, sessionKey: string, runId: string): Promise<void> {
  await db.doc.send(
    new UpdateCommand({
      TableName: db.table,
      Key: keys.session(sessionKey),
      UpdateExpression: "SET updatedAt = :now, lastRunId = :run",
      ConditionExpression: "attribute_exists(pk)",
      ExpressionAttributeValues: { ":now": db.now(), ":run": runId },
    }),
  );
}
