import { QueryCommand, type QueryCommandInput } from "@aws-sdk/lib-dynamodb";
import type { Db } from "./dynamo";

type Item = Record<string, unknown>;

/**
 * Every item a Query matches, following `LastEvaluatedKey`: DynamoDB ends a
 * page at 1 MB of data read (or at `Limit`), so one call can return part of
 * the answer with no error. With `limit`, stops once that many items are in
 * hand (each page asks only for what is still missing). Every Query in the
 * project reads through this; a single call is only right with `Limit: 1`
 * and no filter, where a page always holds the one item if it exists.
 */
export async function queryItems(db: Db, input: Omit<QueryCommandInput, "TableName" | "ExclusiveStartKey" | "Limit">, limit?: number): Promise<Item[]> {
  const items: Item[] = [];
  let startKey: Item | undefined;
  do {
    const remaining = limit === undefined ? undefined : limit - items.length;
    const out = await db.doc.send(
      new QueryCommand({ ...input, TableName: db.table, ...(remaining !== undefined ? { Limit: remaining } : {}), ...(startKey ? { ExclusiveStartKey: startKey } : {}) }),
    );
    items.push(...(out.Items ?? []));
    startKey = out.LastEvaluatedKey;
  } while (startKey && (limit === undefined || items.length < limit));
  return items;
}
