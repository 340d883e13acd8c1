import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { mkdirSync } from "node:fs";
import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ResourceInUseException,
} from "@aws-sdk/client-dynamodb";
// dynalite ships no types; its factory returns a node http.Server.
// @ts-expect-error untyped module
import dynalite from "dynalite";
// Closes the iterators dynalite opens (it never does by itself): see the file.
import "./dynalite-iterators";

export interface LocalDynamo {
  endpoint: string;
  close(): Promise<void>;
}

/**
 * DynamoDB on loopback: dynalite in-process, in memory (tests) or on disk
 * under `dataDir` (`npm start`, so sessions survive a restart).
 */
export async function startLocalDynamo(options: { host?: string; port?: number; dataDir?: string } = {}): Promise<LocalDynamo> {
  if (options.dataDir) mkdirSync(options.dataDir, { recursive: true });
  const server = (dynalite as (opts: object) => Server)({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0, ...(options.dataDir ? { path: options.dataDir } : {}) });
  const host = options.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://${host}:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/**
 * The same single-table schema the CDK stack declares (pk/sk strings,
 * on-demand). Idempotent: an existing table is left as it is.
 */
export async function ensureTable(client: DynamoDBClient, tableName: string): Promise<void> {
  try {
    await client.send(
      new CreateTableCommand({
        TableName: tableName,
        AttributeDefinitions: [
          { AttributeName: "pk", AttributeType: "S" },
          { AttributeName: "sk", AttributeType: "S" },
        ],
        KeySchema: [
          { AttributeName: "pk", KeyType: "HASH" },
          { AttributeName: "sk", KeyType: "RANGE" },
        ],
        BillingMode: "PAY_PER_REQUEST",
      }),
    );
  } catch (error) {
    if (!(error instanceof ResourceInUseException) && (error as { name?: string }).name !== "ResourceInUseException") throw error;
  }
  for (let i = 0; i < 100; i += 1) {
    const out = await client.send(new DescribeTableCommand({ TableName: tableName }));
    if (out.Table?.TableStatus === "ACTIVE") return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`table ${tableName} did not become ACTIVE`);
}
