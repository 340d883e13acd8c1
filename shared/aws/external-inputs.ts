import { createHash } from "node:crypto";
import { GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { ExternalInputSchema, resolveRefusal, type ExternalInput, type ExternalInputKind, type ResolveRefusal } from "../core/external-input";
import { conditionally, isConditionFailure, type Db } from "./dynamo";
import { keys } from "./keys";
import { queryItems } from "./query-pages";

/**
 * The external inputs a run waits for (shared/core/external-input.ts), one
 * item each next to the run. Every transition is one conditional write:
 *
 *   create   attribute_not_exists(pk)        a retried attempt finds the same input
 *   token    status = pending                the pause task parks its task token
 *   resolve  status = pending AND deadlineAt > now AND kind = :kind
 *            (else a consistent read says why: already resolved / expired -> 409)
 */
const NOT_YET_CREATED = "attribute_not_exists(pk)";
const STILL_PENDING = "#status = :pending";
const ANSWERABLE = "#status = :pending AND deadlineAt > :now AND #kind = :kind";

/**
 * Approval ids are derived from the call, so an attempt retried after a crash
 * asks once. They start with the run id (run ids never contain "."), so
 * OpenClaw's resolve methods, which carry only the id, find the record.
 */
export function approvalIdFor(runId: string, toolCallId: string): string {
  return `${runId}.apr_${createHash("sha256").update(`${runId}\n${toolCallId}`).digest("hex").slice(0, 24)}`;
}

/** The run an approval id belongs to (undefined: not one of ours). */
export function runIdOfApprovalId(approvalId: string): string | undefined {
  const dot = approvalId.indexOf(".");
  return dot > 0 && approvalId.slice(dot + 1).startsWith("apr_") ? approvalId.slice(0, dot) : undefined;
}

/** Creates the pending input, or returns the one an earlier attempt created. */
export async function createPendingInput(db: Db, input: Omit<ExternalInput, "v" | "status">, retentionDays = 7): Promise<ExternalInput> {
  const item: ExternalInput = { v: 1, status: "pending", ...input };
  const created = await conditionally(() =>
    db.doc.send(
      new PutCommand({
        TableName: db.table,
        Item: { ...keys.externalInput(input.runId, input.inputId), ...item, // The table's TTL attribute (epoch seconds): kept a while after the deadline for the record.
        expiresAt: Math.floor(input.deadlineAt / 1000) + retentionDays * 86_400 },
        ConditionExpression: NOT_YET_CREATED,
      }),
    ),
  );
  if (created) return item;
  const existing = await getExternalInput(db, input.runId, input.inputId);
  if (!existing) throw new Error(`external input ${input.inputId} vanished while it was created`);
  return existing;
}

export async function getExternalInput(db: Db, runId: string, inputId: string): Promise<ExternalInput | undefined> {
  const out = await db.doc.send(new GetCommand({ TableName: db.table, Key: keys.externalInput(runId, inputId), ConsistentRead: true }));
  return out.Item ? ExternalInputSchema.parse(strip(out.Item)) : undefined;
}

/**
 * The pause task parks its token. Returns the input as it is now: when it was
 * answered before the token arrived, the caller sends the token itself.
 */
export async function attachTaskToken(db: Db, runId: string, inputId: string, taskToken: string): Promise<ExternalInput | undefined> {
  const updated = await transition(db, runId, inputId, {
    set: "taskToken = :token",
    condition: STILL_PENDING,
    values: { ":token": taskToken, ":pending": "pending" },
  });
  return updated ?? getExternalInput(db, runId, inputId);
}

export type ResolveResult = { ok: true; input: ExternalInput } | { ok: false; refusal: ResolveRefusal | { code: "not_found"; message: string } };

/** Stores the answer once, before the deadline; otherwise says why not (the API's 404 / 409). */
export async function resolveExternalInput(
  db: Db,
  runId: string,
  inputId: string,
  kind: ExternalInputKind,
  answer: ExternalInput["answer"],
  extra: Pick<ExternalInput, "resumedAfterSeq"> = {},
): Promise<ResolveResult> {
  const now = db.now();
  const withSeq = extra.resumedAfterSeq !== undefined;
  const resolved = await transition(db, runId, inputId, {
    set: `#status = :resolved, answer = :answer, resolvedAt = :now${withSeq ? ", resumedAfterSeq = :seq" : ""}`,
    condition: ANSWERABLE,
    values: { ":resolved": "resolved", ":pending": "pending", ":answer": answer, ":now": now, ":kind": kind, ...(withSeq ? { ":seq": extra.resumedAfterSeq } : {}) },
  });
  if (resolved) return { ok: true, input: resolved };
  // Resolved inputs never change again, so reading after the failed write tells why it failed.
  const existing = await getExternalInput(db, runId, inputId);
  if (!existing) return { ok: false, refusal: { code: "not_found", message: `No pending input ${inputId} for run ${runId}.` } };
  return { ok: false, refusal: resolveRefusal(existing, kind, now) ?? { code: "already_resolved", message: `${inputId} was already resolved.` } };
}

type Transition = { set: string; condition: string; values: Record<string, unknown> };

/**
 * One conditional `SET` on the input item (the transitions of the timeline
 * above): the input as it is after the write, or undefined when the condition
 * did not hold (the caller reads to learn why).
 */
async function transition(db: Db, runId: string, inputId: string, { set, condition, values }: Transition): Promise<ExternalInput | undefined> {
  try {
    const out = await db.doc.send(
      new UpdateCommand({
        TableName: db.table,
        Key: keys.externalInput(runId, inputId),
        UpdateExpression: `SET ${set}`,
        ConditionExpression: condition,
        ExpressionAttributeNames: namesUsedBy(`${set} ${condition}`),
        ExpressionAttributeValues: values,
        ReturnValues: "ALL_NEW",
      }),
    );
    return ExternalInputSchema.parse(strip(out.Attributes!));
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    return undefined;
  }
}

/** `status` and `kind` are DynamoDB reserved words; DynamoDB refuses a name placeholder the expressions do not use. */
function namesUsedBy(expressions: string): Record<string, string> {
  const all = { "#status": "status", "#kind": "kind" };
  return Object.fromEntries(Object.entries(all).filter(([placeholder]) => expressions.includes(placeholder)));
}

/**
 * The inputs of a run still waiting for an answer (strongly consistent): what
 * an abort wakes, and which client tool calls an OpenAI-API caller is asked to run.
 */
export async function pendingInputsOf(db: Db, runId: string): Promise<ExternalInput[]> {
  const prefix = keys.externalInput(runId, "");
  const items = await queryItems(db, {
    KeyConditionExpression: "pk = :pk AND begins_with(sk, :sk)",
    FilterExpression: "#status = :pending",
    ExpressionAttributeNames: { "#status": "status" },
    ExpressionAttributeValues: { ":pk": prefix.pk, ":sk": prefix.sk, ":pending": "pending" },
    ConsistentRead: true,
  });
  return items.map((item) => ExternalInputSchema.parse(strip(item)));
}

/** `allow-always`: later calls of this tool in this session need no approval. */
export async function rememberAllowAlways(db: Db, sessionKey: string, toolName: string): Promise<void> {
  await db.doc.send(new PutCommand({ TableName: db.table, Item: { ...keys.allowAlways(sessionKey, toolName), v: 1, toolName, at: db.now() } }));
}

export async function isAllowedAlways(db: Db, sessionKey: string, toolName: string): Promise<boolean> {
  const out = await db.doc.send(new GetCommand({ TableName: db.table, Key: keys.allowAlways(sessionKey, toolName), ConsistentRead: true }));
  return out.Item !== undefined;
}

function strip(item: Record<string, unknown>): Record<string, unknown> {
  const { pk: _pk, sk: _sk, expiresAt: _ttl, ...rest } = item;
  return rest;
}
