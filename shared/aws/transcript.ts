import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { z } from "zod";
import { keys, MAX_ITEM_BYTES, pad, prefixes } from "./keys";
import { byteSize, conditionally, isConditionFailure, type Db } from "./dynamo";
import { ItemTooLargeError, SessionBusyError, TranscriptInvariantError, WriterFencedError } from "./errors";
import { MessageSchema } from "../core/message-schema";
import { checkTurn } from "../core/transcript";
import type { Message } from "../core/messages";

/**
 * The session transcript: append-only entries under a writer claim.
 *
 * Timeline of one commit (no transactions: the local emulator has none):
 *   1. claimWriter   UpdateItem HEAD: writerRunId = me, writerEpoch += 1, lease
 *                    IF free OR lease expired OR (same run AND allowReentrant)
 *   2. put entries   PutItem E#<seq> IF absent OR written by an older epoch
 *                    (an older epoch's entry at seq >= nextSeq was never committed)
 *   3. commit        UpdateItem HEAD: nextSeq = n + k IF writerEpoch = mine AND nextSeq = n
 * Readers only see entries below HEAD.nextSeq, so a writer that dies between 2
 * and 3 leaves the transcript at its last valid state, and a taken-over writer
 * (lower epoch) can neither overwrite newer entries nor move HEAD.
 */
export const TranscriptEntrySchema = z.object({
  v: z.literal(1),
  sessionId: z.string(),
  seq: z.number().int().min(0),
  runId: z.string(),
  epoch: z.number().int(),
  ts: z.number(),
  message: MessageSchema,
});
export type TranscriptEntry = z.infer<typeof TranscriptEntrySchema>;

export interface WriterClaim {
  sessionId: string;
  runId: string;
  epoch: number;
  nextSeq: number;
  lastMessage: Message | undefined;
  /** Run that committed the last entry (lets a retried step see its own earlier commit). */
  lastRunId: string | undefined;
}

export interface ClaimOptions {
  leaseMs: number;
  acquireTimeoutMs: number;
  /** Lets the same run take its own live claim again (a new task of the same logical writer). */
  allowReentrant?: boolean;
}

const CLAIM_CONDITION =
  "attribute_not_exists(writerRunId) OR leaseUntil < :now OR (writerRunId = :run AND :reentrant = :yes)";

export async function claimWriter(db: Db, sessionId: string, runId: string, options: ClaimOptions): Promise<WriterClaim> {
  const started = db.now();
  for (let delay = 50; ; delay = Math.min(delay * 2, 1000)) {
    const claim = await tryClaim(db, sessionId, runId, options);
    if (claim) return claim;
    const waited = db.now() - started;
    if (waited >= options.acquireTimeoutMs) {
      throw new SessionBusyError(sessionId, await currentWriter(db, sessionId), waited);
    }
    await sleep(Math.min(delay, options.acquireTimeoutMs - waited));
  }
}

async function tryClaim(db: Db, sessionId: string, runId: string, options: ClaimOptions): Promise<WriterClaim | null> {
  const now = db.now();
  try {
    const out = await db.doc.send(
      new UpdateCommand({
        TableName: db.table,
        Key: keys.transcriptHead(sessionId),
        UpdateExpression:
          "SET v = :v, writerRunId = :run, leaseUntil = :until, nextSeq = if_not_exists(nextSeq, :zero) " +
          "ADD writerEpoch :one",
        ConditionExpression: CLAIM_CONDITION,
        ExpressionAttributeValues: {
          ":v": 1,
          ":run": runId,
          ":until": now + options.leaseMs,
          ":now": now,
          ":zero": 0,
          ":one": 1,
          ":reentrant": options.allowReentrant ? "yes" : "no",
          ":yes": "yes",
        },
        ReturnValues: "ALL_NEW",
      }),
    );
    const head = out.Attributes as { writerEpoch: number; nextSeq: number };
    const last = await readLastEntry(db, sessionId, head.nextSeq);
    return { sessionId, runId, epoch: head.writerEpoch, nextSeq: head.nextSeq, lastMessage: last?.message, lastRunId: last?.runId };
  } catch (error) {
    if (isConditionFailure(error)) return null;
    throw error;
  }
}

async function currentWriter(db: Db, sessionId: string): Promise<string | undefined> {
  return (await readHead(db, sessionId)).writerRunId;
}

/** Appends one turn (validated against the invariants) and returns the advanced claim. */
export async function appendTurn(db: Db, claim: WriterClaim, turn: Message[]): Promise<WriterClaim> {
  const violations = checkTurn(claim.lastMessage, turn);
  if (violations.length > 0) throw new TranscriptInvariantError(violations);
  const ts = db.now();
  const entries = turn.map((message, i) =>
    TranscriptEntrySchema.parse({ v: 1, sessionId: claim.sessionId, seq: claim.nextSeq + i, runId: claim.runId, epoch: claim.epoch, ts, message }),
  );
  for (const entry of entries) await putEntry(db, claim, entry);
  await commitHead(db, claim, entries.length);
  return { ...claim, nextSeq: claim.nextSeq + entries.length, lastMessage: turn[turn.length - 1], lastRunId: claim.runId };
}

async function putEntry(db: Db, claim: WriterClaim, entry: TranscriptEntry): Promise<void> {
  const item = { ...keys.transcriptEntry(entry.sessionId, entry.seq), ...entry };
  if (byteSize(item) > MAX_ITEM_BYTES - 1024) {
    throw new ItemTooLargeError(`transcript entry ${entry.seq} is ${byteSize(item)} bytes; cap tool results before commit`);
  }
  const written = await conditionally(() =>
    db.doc.send(
      new PutCommand({
        TableName: db.table,
        Item: item,
        ConditionExpression: "attribute_not_exists(pk) OR epoch < :epoch",
        ExpressionAttributeValues: { ":epoch": claim.epoch },
      }),
    ),
  );
  if (!written) throw new WriterFencedError(claim.sessionId, claim.runId);
}

async function commitHead(db: Db, claim: WriterClaim, count: number): Promise<void> {
  const committed = await conditionally(() =>
    db.doc.send(
      new UpdateCommand({
        TableName: db.table,
        Key: keys.transcriptHead(claim.sessionId),
        UpdateExpression: "SET nextSeq = :next",
        ConditionExpression: "writerEpoch = :epoch AND nextSeq = :expected",
        ExpressionAttributeValues: { ":next": claim.nextSeq + count, ":epoch": claim.epoch, ":expected": claim.nextSeq },
      }),
    ),
  );
  if (!committed) throw new WriterFencedError(claim.sessionId, claim.runId);
}

/** Gives the claim up; a no-op when someone else already holds it. */
export async function releaseWriter(db: Db, claim: Pick<WriterClaim, "sessionId" | "runId">): Promise<boolean> {
  return conditionally(() =>
    db.doc.send(
      new UpdateCommand({
        TableName: db.table,
        Key: keys.transcriptHead(claim.sessionId),
        UpdateExpression: "REMOVE writerRunId, leaseUntil",
        ConditionExpression: "writerRunId = :run",
        ExpressionAttributeValues: { ":run": claim.runId },
      }),
    ),
  );
}

/** Committed entries in order (entries at or past HEAD.nextSeq are invisible). */
export async function readTranscript(db: Db, sessionId: string): Promise<TranscriptEntry[]> {
  const head = await readHead(db, sessionId);
  if (head.nextSeq === 0) return [];
  const entries: TranscriptEntry[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const out = await db.doc.send(
      new QueryCommand({
        TableName: db.table,
        KeyConditionExpression: "pk = :pk AND sk BETWEEN :from AND :to",
        ExpressionAttributeValues: {
          ":pk": keys.transcriptHead(sessionId).pk,
          ":from": `${prefixes.transcriptEntry}${pad(0)}`,
          ":to": `${prefixes.transcriptEntry}${pad(head.nextSeq - 1)}`,
        },
        ConsistentRead: true,
        ExclusiveStartKey: startKey,
      }),
    );
    for (const item of out.Items ?? []) entries.push(parseEntry(item));
    startKey = out.LastEvaluatedKey;
  } while (startKey);
  return entries;
}

async function readHead(db: Db, sessionId: string): Promise<{ nextSeq: number; writerRunId?: string }> {
  const out = await db.doc.send(new GetCommand({ TableName: db.table, Key: keys.transcriptHead(sessionId), ConsistentRead: true }));
  return { nextSeq: (out.Item?.nextSeq as number | undefined) ?? 0, writerRunId: out.Item?.writerRunId as string | undefined };
}

async function readLastEntry(db: Db, sessionId: string, nextSeq: number): Promise<TranscriptEntry | undefined> {
  if (nextSeq === 0) return undefined;
  const out = await db.doc.send(
    new GetCommand({ TableName: db.table, Key: keys.transcriptEntry(sessionId, nextSeq - 1), ConsistentRead: true }),
  );
  return out.Item ? parseEntry(out.Item) : undefined;
}

function parseEntry(item: Record<string, unknown>): TranscriptEntry {
  const { pk: _pk, sk: _sk, ...rest } = item;
  return TranscriptEntrySchema.parse(rest);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
