import { GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import * as z from "zod";
import { keys, MAX_ITEM_BYTES, pad, prefixes } from "./keys";
import { byteSize, conditionally, isConditionFailure, type Db } from "./dynamo";
import { queryItems } from "./query-pages";
import { ItemTooLargeError, SessionBusyError, TranscriptInvariantError, WriterFencedError } from "./errors";
import { checkTurn } from "../core/transcript";
import type { Message, ToolResultMessage } from "../core/messages";
import { EntryBodySchema, isMessageEntry, type EntryBody } from "../core/transcript-entries";
import { truncateToolResult } from "../core/tool-result-truncation";

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
const EntryBaseSchema = z.lazy(() => z.object({
  v: z.literal(1),
  sessionId: z.string(),
  seq: z.number().int().min(0),
  runId: z.string(),
  epoch: z.number().int(),
  ts: z.number(),
}));
type EntryBase = z.infer<typeof EntryBaseSchema>;

/** Any stored entry: a message, a compaction, a rewrite or a note (see core/transcript-entries). */
// Built on first parse (z.lazy): a function that never reads these pays nothing for them at import (issue 15).
export const TranscriptEntrySchema = z.lazy(() => z.intersection(EntryBaseSchema, EntryBodySchema));
export type TranscriptEntry = EntryBase & EntryBody;
/** A conversation message entry (what history views list). */
export type MessageEntry = EntryBase & { kind?: "message"; message: Message };

export interface WriterClaim {
  sessionId: string;
  runId: string;
  epoch: number;
  nextSeq: number;
  lastMessage: Message | undefined;
  /** Run that committed the last entry (lets a retried step see its own earlier commit). */
  lastRunId: string | undefined;
  /** When the claim's lease ends (a claim given up in a commit resumes with the same lease). */
  leaseUntil?: number;
  /**
   * The last commit gave the claim up (`release`): nothing to release any more, and a
   * later append first resumes it, only if nobody claimed or committed since.
   */
  released?: boolean;
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
  return (await claimWith(db, sessionId, runId, options, async (nextSeq) => ({ last: await readLastMessage(db, sessionId, nextSeq), entries: [] }))).claim;
}

/**
 * The claim and every committed entry below its head, read under it: the
 * history query also gives the last message, so the claim needs no read of
 * its own (one request instead of a GetItem and a Query).
 */
export async function claimWriterWithHistory(db: Db, sessionId: string, runId: string, options: ClaimOptions): Promise<{ claim: WriterClaim; entries: TranscriptEntry[] }> {
  return claimWith(db, sessionId, runId, options, async (nextSeq) => {
    const entries = await readEntriesUnderClaim(db, { sessionId, nextSeq });
    const last = [...entries].reverse().find((entry) => isMessageEntry(entry)) as MessageEntry | undefined;
    return { last, entries };
  });
}

type TailReader = (nextSeq: number) => Promise<{ last: MessageEntry | undefined; entries: TranscriptEntry[] }>;

async function claimWith(db: Db, sessionId: string, runId: string, options: ClaimOptions, readTail: TailReader): Promise<{ claim: WriterClaim; entries: TranscriptEntry[] }> {
  const started = db.now();
  for (let delay = 50; ; delay = Math.min(delay * 2, 1000)) {
    const claim = await tryClaim(db, sessionId, runId, options, readTail);
    if (claim) return claim;
    const waited = db.now() - started;
    if (waited >= options.acquireTimeoutMs) {
      throw new SessionBusyError(sessionId, await currentWriter(db, sessionId), waited);
    }
    await sleep(Math.min(delay, options.acquireTimeoutMs - waited));
  }
}

async function tryClaim(db: Db, sessionId: string, runId: string, options: ClaimOptions, readTail: TailReader): Promise<{ claim: WriterClaim; entries: TranscriptEntry[] } | null> {
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
    const { last, entries } = await readTail(head.nextSeq);
    return {
      claim: { sessionId, runId, epoch: head.writerEpoch, nextSeq: head.nextSeq, lastMessage: last?.message, lastRunId: last?.runId, leaseUntil: now + options.leaseMs },
      entries,
    };
  } catch (error) {
    if (isConditionFailure(error)) return null;
    throw error;
  }
}

async function currentWriter(db: Db, sessionId: string): Promise<string | undefined> {
  return (await readHead(db, sessionId)).writerRunId;
}

/**
 * Appends one turn (validated against the invariants) and returns the
 * advanced claim. `leading` entries (a session_start note) go in the same
 * commit, before the turn.
 */
export async function appendTurn(db: Db, claim: WriterClaim, turn: Message[], leading: EntryBody[] = [], options: AppendOptions = {}): Promise<WriterClaim> {
  return (await appendTurnWithEntries(db, claim, turn, leading, options)).claim;
}

/** `appendTurn` that also answers the entries it committed (a caller that keeps the history in hand appends them). */
export async function appendTurnWithEntries(
  db: Db,
  claim: WriterClaim,
  turn: Message[],
  leading: EntryBody[] = [],
  options: AppendOptions = {},
): Promise<{ claim: WriterClaim; entries: TranscriptEntry[] }> {
  const violations = checkTurn(claim.lastMessage, turn);
  if (violations.length > 0) throw new TranscriptInvariantError(violations);
  if (leading.some((body) => isMessageEntry(body))) throw new TranscriptInvariantError(["messages_must_be_in_the_turn"]);
  const committed = await appendBodies(db, claim, [...leading, ...turn.map((message) => ({ message }))], options);
  return { claim: { ...committed.claim, lastMessage: turn[turn.length - 1], lastRunId: claim.runId }, entries: committed.entries };
}

/**
 * Appends entries that are not conversation turns (compaction, rewrite, note)
 * under the same fence. They do not change the last message the invariants
 * look at.
 */
export async function appendEntries(db: Db, claim: WriterClaim, bodies: EntryBody[]): Promise<WriterClaim> {
  if (bodies.length === 0) return claim;
  if (bodies.some((body) => isMessageEntry(body))) throw new TranscriptInvariantError(["messages_must_use_append_turn"]);
  return (await appendBodies(db, claim, bodies)).claim;
}

export interface AppendOptions {
  /** Give the claim up in the commit itself (one write instead of two when this is the step's last append). */
  release?: boolean;
}

async function appendBodies(db: Db, held: WriterClaim, bodies: EntryBody[], options: AppendOptions = {}): Promise<{ claim: WriterClaim; entries: TranscriptEntry[] }> {
  const claim = held.released ? await resumeClaim(db, held) : held;
  const ts = db.now();
  const entries = bodies.map((body, i) =>
    fitItem(TranscriptEntrySchema.parse({ v: 1, sessionId: claim.sessionId, seq: claim.nextSeq + i, runId: claim.runId, epoch: claim.epoch, ts, ...body }) as TranscriptEntry),
  );
  await putEntries(db, claim, entries);
  const release = options.release === true;
  await commitHead(db, claim, entries.length, release);
  const { released: _released, ...kept } = claim;
  return { claim: { ...kept, nextSeq: claim.nextSeq + entries.length, ...(release ? { released: true } : {}) }, entries };
}

/**
 * Takes back a claim its own last commit gave up (a turn after what looked
 * like the last one: a before_agent_finalize revision, a steering message).
 * Only when nobody claimed or committed since: same epoch, same head, no
 * writer. Anyone who claimed in between fenced this writer out, as a claim
 * held all along would have been: WriterFencedError. The epoch is not bumped
 * (the entries this claim wrote stay its own), and the lease is the one the
 * claim was taken with.
 */
async function resumeClaim(db: Db, claim: WriterClaim): Promise<WriterClaim> {
  const resumed = await conditionally(() =>
    db.doc.send(
      new UpdateCommand({
        TableName: db.table,
        Key: keys.transcriptHead(claim.sessionId),
        UpdateExpression: "SET writerRunId = :run, leaseUntil = :until",
        ConditionExpression: "attribute_not_exists(writerRunId) AND writerEpoch = :epoch AND nextSeq = :expected",
        ExpressionAttributeValues: { ":run": claim.runId, ":until": claim.leaseUntil ?? db.now() + RESUMED_LEASE_MS, ":epoch": claim.epoch, ":expected": claim.nextSeq },
      }),
    ),
  );
  if (!resumed) throw new WriterFencedError(claim.sessionId, claim.runId);
  const { released: _released, ...held } = claim;
  return held;
}

/** Lease of a resumed claim that did not record its own (claims made before the field). */
const RESUMED_LEASE_MS = 60_000;

/** Room left for attribute names and keys below DynamoDB's 400 KB item limit. */
const ITEM_MARGIN_BYTES = 4096;

/**
 * Last line of defence for the 400 KB item limit: tools already cap their
 * results (agent.maxToolResultChars), but bytes are not characters (4 bytes
 * per emoji), so a tool result that still does not fit is cut to head + tail
 * here, before it is written. Anything else that does not fit is refused.
 */
function fitItem(entry: TranscriptEntry): TranscriptEntry {
  const limit = MAX_ITEM_BYTES - ITEM_MARGIN_BYTES;
  let fitted = entry;
  for (let round = 0; round < 8 && byteSize(fitted) > limit; round += 1) {
    const result = toolResultOf(fitted);
    if (!result) break;
    const ratio = limit / byteSize(fitted);
    const content = truncateToolResult(result.content, Math.floor(result.content.length * ratio * 0.95)).text;
    fitted = replaceToolResult(fitted, { ...result, content });
  }
  if (byteSize(fitted) > limit) {
    throw new ItemTooLargeError(`transcript entry ${entry.seq} is ${byteSize(fitted)} bytes; only tool results are cut to fit`);
  }
  return fitted;
}

function toolResultOf(entry: TranscriptEntry): ToolResultMessage | undefined {
  if (isMessageEntry(entry) && entry.message.role === "tool_result") return entry.message;
  if (entry.kind === "rewrite" && entry.rewrite.message.role === "tool_result") return entry.rewrite.message;
  return undefined;
}

function replaceToolResult(entry: TranscriptEntry, message: ToolResultMessage): TranscriptEntry {
  if (entry.kind === "rewrite") return { ...entry, rewrite: { ...entry.rewrite, message } };
  return { ...entry, message } as TranscriptEntry;
}

/**
 * The entries of one commit, written at once: each put is fenced on its own
 * (different keys, same epoch) and none is visible before the head's commit
 * that follows, so their order does not matter; a turn with a tool call
 * saves a round trip. Every put has settled when this returns (the first
 * refusal is thrown only then), so no write of a fenced writer lands after
 * its caller moved on.
 */
async function putEntries(db: Db, claim: WriterClaim, entries: TranscriptEntry[]): Promise<void> {
  const settled = await Promise.allSettled(entries.map((entry) => putEntry(db, claim, entry)));
  const refused = settled.find((outcome): outcome is PromiseRejectedResult => outcome.status === "rejected");
  if (refused) throw refused.reason;
}

async function putEntry(db: Db, claim: WriterClaim, entry: TranscriptEntry): Promise<void> {
  const item = { ...keys.transcriptEntry(entry.sessionId, entry.seq), ...entry };
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

async function commitHead(db: Db, claim: WriterClaim, count: number, release: boolean): Promise<void> {
  const committed = await conditionally(() =>
    db.doc.send(
      new UpdateCommand({
        TableName: db.table,
        Key: keys.transcriptHead(claim.sessionId),
        UpdateExpression: release ? "SET nextSeq = :next REMOVE writerRunId, leaseUntil" : "SET nextSeq = :next",
        ConditionExpression: "writerEpoch = :epoch AND nextSeq = :expected",
        ExpressionAttributeValues: { ":next": claim.nextSeq + count, ":epoch": claim.epoch, ":expected": claim.nextSeq },
      }),
    ),
  );
  if (!committed) throw new WriterFencedError(claim.sessionId, claim.runId);
}

/**
 * Gives the claim up; a no-op when someone else already holds it. A claim
 * with its epoch releases only that claim: a stale task of the same run
 * (a lower epoch, fenced out by its successor's re-entrant claim) cannot
 * release its successor's. Without an epoch (the run has ended: finalize)
 * whatever claim the run still holds is released.
 */
export async function releaseWriter(db: Db, claim: Pick<WriterClaim, "sessionId" | "runId"> & { epoch?: number; released?: boolean }): Promise<boolean> {
  // Its last commit gave it up already (no request).
  if (claim.released) return true;
  const byEpoch = claim.epoch !== undefined;
  return conditionally(() =>
    db.doc.send(
      new UpdateCommand({
        TableName: db.table,
        Key: keys.transcriptHead(claim.sessionId),
        UpdateExpression: "REMOVE writerRunId, leaseUntil",
        ConditionExpression: byEpoch ? "writerRunId = :run AND writerEpoch = :epoch" : "writerRunId = :run",
        ExpressionAttributeValues: { ":run": claim.runId, ...(byEpoch ? { ":epoch": claim.epoch } : {}) },
      }),
    ),
  );
}

/** Committed conversation messages in order (what history views list; notes, compactions and rewrites left out). */
export async function readTranscript(db: Db, sessionId: string): Promise<MessageEntry[]> {
  return (await readEntries(db, sessionId)).filter((entry): entry is MessageEntry => isMessageEntry(entry));
}

/** Every committed entry in order (entries at or past HEAD.nextSeq are invisible). */
export async function readEntries(db: Db, sessionId: string): Promise<TranscriptEntry[]> {
  const head = await readHead(db, sessionId);
  if (head.nextSeq === 0) return [];
  return queryEntries(db, sessionId, 0, head.nextSeq - 1, true);
}

/**
 * Every committed entry below `nextSeq`, as the caller's own writer claim read
 * it (its ALL_NEW head): while the claim is held nobody else commits, so the
 * head need not be read again.
 */
export async function readEntriesUnderClaim(db: Db, claim: Pick<WriterClaim, "sessionId" | "nextSeq">): Promise<TranscriptEntry[]> {
  if (claim.nextSeq === 0) return [];
  return queryEntries(db, claim.sessionId, 0, claim.nextSeq - 1, true);
}

async function queryEntries(db: Db, sessionId: string, from: number, to: number, forward: boolean, limit?: number): Promise<TranscriptEntry[]> {
  const items = await queryItems(
    db,
    {
      KeyConditionExpression: "pk = :pk AND sk BETWEEN :from AND :to",
      ExpressionAttributeValues: {
        ":pk": keys.transcriptHead(sessionId).pk,
        ":from": `${prefixes.transcriptEntry}${pad(from)}`,
        ":to": `${prefixes.transcriptEntry}${pad(to)}`,
      },
      ConsistentRead: true,
      ScanIndexForward: forward,
    },
    limit,
  );
  return items.map(parseEntry);
}

async function readHead(db: Db, sessionId: string): Promise<{ nextSeq: number; writerRunId?: string }> {
  const out = await db.doc.send(new GetCommand({ TableName: db.table, Key: keys.transcriptHead(sessionId), ConsistentRead: true }));
  return { nextSeq: (out.Item?.nextSeq as number | undefined) ?? 0, writerRunId: out.Item?.writerRunId as string | undefined };
}

/**
 * The last committed conversation message (the invariants check new turns
 * against it). Usually the last entry; after a compaction or a note, a short
 * backwards query finds it.
 */
async function readLastMessage(db: Db, sessionId: string, nextSeq: number): Promise<MessageEntry | undefined> {
  if (nextSeq === 0) return undefined;
  const out = await db.doc.send(
    new GetCommand({ TableName: db.table, Key: keys.transcriptEntry(sessionId, nextSeq - 1), ConsistentRead: true }),
  );
  const last = out.Item ? parseEntry(out.Item) : undefined;
  if (!last || isMessageEntry(last)) return last as MessageEntry | undefined;
  for (let to = nextSeq - 2; to >= 0; to -= BACKWARD_PAGE) {
    const page = await queryEntries(db, sessionId, Math.max(0, to - BACKWARD_PAGE + 1), to, false, BACKWARD_PAGE);
    const found = page.find((entry) => isMessageEntry(entry));
    if (found) return found as MessageEntry;
  }
  return undefined;
}

const BACKWARD_PAGE = 16;

function parseEntry(item: Record<string, unknown>): TranscriptEntry {
  const { pk: _pk, sk: _sk, ...rest } = item;
  return TranscriptEntrySchema.parse(rest) as TranscriptEntry;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
