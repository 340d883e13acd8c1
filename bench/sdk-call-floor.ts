/**
 * `npx tsx bench/sdk-call-floor.ts [calls]`: the floor of one DynamoDB call
 * on this machine, the unit a run's local overhead is made of (issue 15):
 * the functions' client (shared/aws/document-client.ts: lib-dynamodb's
 * commands over a DynamoDBClient with `cacheMiddleware`) and, for
 * comparison, lib-dynamodb's own DynamoDBDocumentClient, both against
 * dynalite in this process over loopback HTTP (no edge, no sandbox, no
 * other traffic), and dynalite's own request handler driven directly (no
 * SDK, no HTTP). Sequential calls, mean wall and CPU time (this process:
 * client and dynalite) of `calls` (default 2000) after 100 uncounted ones.
 */
import { performance } from "node:perf_hooks";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { ensureTable, startLocalDynamo } from "../infra/local/dynamo";
import { documentClient, type DocumentClient } from "../shared/aws/document-client";

const CALLS = Number(process.argv[2] ?? 2000);
const TABLE = "floor";

interface PerCall {
  wallMs: number;
  cpuMs: number;
}

async function perCall(run: (i: number) => Promise<unknown>): Promise<PerCall> {
  for (let i = 0; i < 100; i += 1) await run(i);
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (let i = 0; i < CALLS; i += 1) await run(i);
  const used = process.cpuUsage(cpu);
  return { wallMs: (performance.now() - started) / CALLS, cpuMs: (used.user + used.system) / 1000 / CALLS };
}

const key = (i: number) => ({ pk: `P#${i % 50}`, sk: "S" });

/** Put, consistent Get and an ADD update through one client. */
async function clientRows(label: string, doc: DocumentClient): Promise<[string, PerCall][]> {
  return [
    [`PutItem (${label})`, await perCall((i) => doc.send(new PutCommand({ TableName: TABLE, Item: { ...key(i), v: 1, body: "x".repeat(300) } })))],
    [`GetItem, consistent (${label})`, await perCall((i) => doc.send(new GetCommand({ TableName: TABLE, Key: key(i), ConsistentRead: true })))],
    [`UpdateItem, ADD (${label})`, await perCall((i) => doc.send(new UpdateCommand({ TableName: TABLE, Key: key(i), UpdateExpression: "ADD n :one", ExpressionAttributeValues: { ":one": 1 } })))],
  ];
}

async function main(): Promise<void> {
  const dynamo = await startLocalDynamo();
  try {
    const base = { endpoint: dynamo.endpoint, region: "us-east-1", credentials: { accessKeyId: "floor", secretAccessKey: "floor" } };
    const client = new DynamoDBClient({ ...base, cacheMiddleware: true });
    await ensureTable(client, TABLE);
    const ours = documentClient(client);
    const theirs = DynamoDBDocumentClient.from(new DynamoDBClient(base));
    // One uncounted pass of both first: whichever came first would otherwise pay for the JIT and dynalite's warm-up.
    await clientRows("warm-up", ours);
    await clientRows("warm-up", theirs);
    const rows: [string, PerCall][] = [...(await clientRows("functions' client", ours)), ...(await clientRows("lib-dynamodb DocumentClient", theirs))];
    const body = Buffer.from(JSON.stringify({ TableName: TABLE, Key: { pk: { S: "P#1" }, sk: { S: "S" } }, ConsistentRead: true }));
    const headers = {
      "content-type": "application/x-amz-json-1.0",
      "x-amz-target": "DynamoDB_20120810.GetItem",
      authorization: "AWS4-HMAC-SHA256 Credential=floor/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0",
      "x-amz-date": "20260101T000000Z",
      host: "localhost",
    };
    rows.push(["GetItem, consistent (dynalite's handler alone)", await perCall(() => dynamo.handler({ method: "POST", path: "/", headers, body }))]);
    for (const [name, { wallMs, cpuMs }] of rows) console.log(`${name.padEnd(52)} ${wallMs.toFixed(3)} ms per call, ${cpuMs.toFixed(3)} ms CPU`);
  } finally {
    await dynamo.close();
  }
}

main().then(() => process.exit(0), (error) => { console.error(error); process.exit(1); });
