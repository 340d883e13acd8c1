import { GetCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import * as z from "zod";
import type { Usage } from "../core/messages";
import { NO_SPEND, type Spend } from "../core/spend";
import type { Db } from "./dynamo";
import { keys } from "./keys";

/**
 * Spend counters for a run and for a session (mission "Enforce spend"): one
 * item each, updated with an atomic ADD after every model call (failed calls
 * included), so concurrent or crashed attempts never lose or double-count a
 * call they reported. Wasted tokens (output that never reached the transcript)
 * are counted apart, inside the totals.
 */
export const SpendItemSchema = z.lazy(() => z.object({
  v: z.literal(1),
  calls: z.number().int().min(0),
  input: z.number().min(0),
  output: z.number().min(0),
  cacheRead: z.number().min(0),
  cacheWrite: z.number().min(0),
  tokens: z.number().min(0),
  costUsd: z.number().min(0),
  wastedTokens: z.number().min(0),
  wastedCostUsd: z.number().min(0),
}));
export type SpendItem = z.infer<typeof SpendItemSchema>;

export async function readSpendItem(db: Db, key: { pk: string; sk: string }): Promise<SpendItem | undefined> {
  const out = await db.doc.send(new GetCommand({ TableName: db.table, Key: key, ConsistentRead: true }));
  if (!out.Item) return undefined;
  const { pk: _pk, sk: _sk, ...rest } = out.Item;
  return SpendItemSchema.parse(rest);
}

/**
 * The spend so far, for the budgets that are set: a counter no budget limits
 * is not read (it stays counted by `recordSpend`; two reads less per attempt
 * when no budget is configured, the default).
 */
export async function readSpend(db: Db, runId: string, sessionKey: string, needed = { run: true, session: true }): Promise<{ run: Spend; session: Spend }> {
  const [run, session] = await Promise.all([
    needed.run ? readSpendItem(db, keys.runUsage(runId)) : undefined,
    needed.session ? readSpendItem(db, keys.sessionUsage(sessionKey)) : undefined,
  ]);
  const spend = (item: SpendItem | undefined): Spend => (item ? { tokens: item.tokens, costUsd: item.costUsd } : NO_SPEND);
  return { run: spend(run), session: spend(session) };
}

export async function recordSpend(db: Db, target: { runId: string; sessionKey: string }, usage: Usage, spend: Spend, wasted: boolean): Promise<void> {
  const values = {
    ":v": 1,
    ":one": 1,
    ":input": usage.input,
    ":output": usage.output,
    ":cacheRead": usage.cacheRead,
    ":cacheWrite": usage.cacheWrite,
    ":tokens": spend.tokens,
    ":cost": spend.costUsd,
    ":wastedTokens": wasted ? spend.tokens : 0,
    ":wastedCost": wasted ? spend.costUsd : 0,
  };
  const update = (key: { pk: string; sk: string }) =>
    db.doc.send(
      new UpdateCommand({
        TableName: db.table,
        Key: key,
        UpdateExpression:
          "SET v = :v ADD calls :one, #input :input, #output :output, cacheRead :cacheRead, cacheWrite :cacheWrite, " +
          "tokens :tokens, costUsd :cost, wastedTokens :wastedTokens, wastedCostUsd :wastedCost",
        ExpressionAttributeNames: { "#input": "input", "#output": "output" },
        ExpressionAttributeValues: values,
      }),
    );
  await Promise.all([update(keys.runUsage(target.runId)), update(keys.sessionUsage(target.sessionKey))]);
}
