/**
 * dynalite never closed the abstract-level iterators behind its Query and
 * write paths (infra/local/dynalite-iterators.ts): every request left one
 * registered in the database and, on disk, a LevelDB snapshot pinning
 * memory — the local stack's RSS grew with every run (issue 16). After the
 * requests of a run-like workload answer, every iterator they opened is closed.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DynamoDBClient, GetItemCommand, PutItemCommand, QueryCommand, UpdateItemCommand } from "@aws-sdk/client-dynamodb";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ensureTable, startLocalDynamo } from "../../infra/local/dynamo";

interface IteratorCounts {
  opened: number;
  closed: number;
}

/** Counts iterators opened on any abstract-level database and the first close of each (the module dynalite resolves). */
function countIterators(): { counts: IteratorCounts; restore: () => void } {
  const level = createRequire(createRequire(import.meta.url).resolve("dynalite"))("abstract-level");
  const counts: IteratorCounts = { opened: 0, closed: 0 };
  const restores: (() => void)[] = [];
  const wrap = (proto: Record<string, unknown>, method: string, before: (self: object) => void) => {
    const original = proto[method] as (...args: unknown[]) => unknown;
    proto[method] = function (this: object, ...args: unknown[]) {
      before(this);
      return original.apply(this, args);
    };
    restores.push(() => (proto[method] = original));
  };
  for (const method of ["iterator", "keys", "values"]) wrap(level.AbstractLevel.prototype, method, () => (counts.opened += 1));
  const seen = new WeakSet<object>();
  for (const name of ["AbstractIterator", "AbstractKeyIterator", "AbstractValueIterator"]) {
    wrap(level[name].prototype, "close", (self) => {
      if (seen.has(self)) return;
      seen.add(self);
      counts.closed += 1;
    });
  }
  return { counts, restore: () => restores.reverse().forEach((restore) => restore()) };
}

async function runLikeRequests(client: DynamoDBClient, table: string): Promise<void> {
  for (let i = 0; i < 10; i += 1) {
    await client.send(new PutItemCommand({ TableName: table, Item: { pk: { S: `session#${i % 3}` }, sk: { S: `event#${i}` } } }));
    await client.send(new GetItemCommand({ TableName: table, Key: { pk: { S: "session#1" }, sk: { S: "event#1" } } }));
    await client.send(
      new UpdateItemCommand({ TableName: table, Key: { pk: { S: "session#1" }, sk: { S: "run" } }, UpdateExpression: "SET n = :n", ExpressionAttributeValues: { ":n": { N: `${i}` } } }),
    );
    const query = { TableName: table, KeyConditionExpression: "pk = :p", ExpressionAttributeValues: { ":p": { S: "session#1" } } };
    await client.send(new QueryCommand(query));
    await client.send(new QueryCommand({ ...query, Limit: 1 }));
    await client.send(new QueryCommand({ ...query, Limit: 1, ScanIndexForward: false }));
  }
}

describe.each([
  { where: "in memory", onDisk: false },
  { where: "on disk (DATA_DIR)", onDisk: true },
])("dynalite $where closes the iterators its requests open", ({ onDisk }) => {
  let dir: string | undefined;
  let tracking: ReturnType<typeof countIterators>;

  beforeAll(() => {
    dir = onDisk ? mkdtempSync(join(tmpdir(), "dynalite-iterators-")) : undefined;
    tracking = countIterators();
  });
  afterAll(() => {
    tracking.restore();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("every iterator opened by puts, gets, updates and queries is closed once they answered", async () => {
    const dynamo = await startLocalDynamo(dir ? { dataDir: dir } : {});
    const client = new DynamoDBClient({ region: "us-east-1", endpoint: dynamo.endpoint, credentials: { accessKeyId: "local", secretAccessKey: "local" } });
    try {
      await ensureTable(client, "iterators-test");
      await runLikeRequests(client, "iterators-test");
      expect(tracking.counts.opened).toBeGreaterThanOrEqual(30);
      // A stream closes its iterator right after it ended: wait for that, not for a time.
      await vi.waitFor(() => expect(tracking.counts.closed).toBe(tracking.counts.opened), { timeout: 30_000, interval: 50 });
    } finally {
      client.destroy();
      await dynamo.close();
    }
  });
});
