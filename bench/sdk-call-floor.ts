/**
 * `npx tsx bench/sdk-call-floor.ts [calls]`: the floor of one DynamoDB call
 * on this machine, the unit a run's local overhead is made of (issue 15):
 * the real `@aws-sdk/lib-dynamodb` client against dynalite in this process
 * over loopback HTTP (no edge, no sandbox, no other traffic), and dynalite's
 * own request handler driven directly (no SDK, no HTTP). Sequential calls,
 * mean of `calls` (default 2000) after 100 uncounted ones.
 */
import { performance } from "node:perf_hooks";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { ensureTable, startLocalDynamo } from "../infra/local/dynamo";

const CALLS = Number(process.argv[2] ?? 2000);
const TABLE = "floor";

async function meanMs(run: (i: number) => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 100; i += 1) await run(i);
  const started = performance.now();
  for (let i = 0; i < CALLS; i += 1) await run(i);
  return (performance.now() - started) / CALLS;
}

async function main(): Promise<void> {
  const dynamo = await startLocalDynamo();
  try {
    const client = new DynamoDBClient({ endpoint: dynamo.endpoint, region: "us-east-1", credentials: { accessKeyId: "floor", secretAccessKey: "floor" } });
    const doc = DynamoDBDocumentClient.from(client);
    await ensureTable(client, TABLE);
    const key = (i: number) => ({ pk: `P#${i % 50}`, sk: "S" });
    const rows: [string, number][] = [
      ["PutItem (SDK, loopback HTTP)", await meanMs((i) => doc.send(new PutCommand({ TableName: TABLE, Item: { ...key(i), v: 1, body: "x".repeat(300) } })))],
      ["GetItem, consistent (SDK, loopback HTTP)", await meanMs((i) => doc.send(new GetCommand({ TableName: TABLE, Key: key(i), ConsistentRead: true })))],
      ["UpdateItem, ADD (SDK, loopback HTTP)", await meanMs((i) => doc.send(new UpdateCommand({ TableName: TABLE, Key: key(i), UpdateExpression: "ADD n :one", ExpressionAttributeValues: { ":one": 1 } })))],
    ];
    const body = Buffer.from(JSON.stringify({ TableName: TABLE, Key: { pk: { S: "P#1" }, sk: { S: "S" } }, ConsistentRead: true }));
    const headers = {
      "content-type": "application/x-amz-json-1.0",
      "x-amz-target": "DynamoDB_20120810.GetItem",
      authorization: "AWS4-HMAC-SHA256 Credential=floor/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0",
      "x-amz-date": "20260101T000000Z",
      host: "localhost",
    };
    rows.push(["GetItem, consistent (dynalite's handler alone)", await meanMs(() => dynamo.handler({ method: "POST", path: "/", headers, body }))]);
    for (const [name, ms] of rows) console.log(`${name.padEnd(48)} ${ms.toFixed(3)} ms per call`);
  } finally {
    await dynamo.close();
  }
}

main().then(() => process.exit(0), (error) => { console.error(error); process.exit(1); });
