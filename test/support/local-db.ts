import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { documentClient } from "../../shared/aws/document-client";
import { ensureTable, startLocalDynamo, type LocalDynamo } from "../../infra/local/dynamo";
import type { Db } from "../../shared/aws/dynamo";

export interface TestDb {
  db: Db;
  dynamo: LocalDynamo;
  /**
   * The low-level client under `db.doc`. Built without `cacheMiddleware`, so
   * a test may add middleware to it between calls.
   */
  client: DynamoDBClient;
  /** Moves the test clock (leases, TTLs) without sleeping. */
  advance(ms: number): void;
  close(): Promise<void>;
}

/** A real DynamoDB API (dynalite, in memory) with a controllable clock. */
export async function startTestDb(tableName = "agent-runner-test"): Promise<TestDb> {
  const dynamo = await startLocalDynamo();
  const client = new DynamoDBClient({ region: "us-east-1", endpoint: dynamo.endpoint, credentials: { accessKeyId: "local", secretAccessKey: "local" } });
  await ensureTable(client, tableName);
  let offset = 0;
  const db: Db = {
    doc: documentClient(client, { removeUndefinedValues: true }),
    table: tableName,
    now: () => Date.now() + offset,
  };
  return {
    db,
    dynamo,
    client,
    advance: (ms) => {
      offset += ms;
    },
    close: async () => {
      client.destroy();
      await dynamo.close();
    },
  };
}
