import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { documentClient, type DocumentClient } from "../../shared/aws/document-client";
import { SendMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import { ensureTable, startLocalDynamo, type LocalDynamo } from "../../infra/local/dynamo";
import { createFifoQueueWithDlq, startLocalSqs, type LocalSqs } from "../../infra/local/sqs";
import { createAwsClients } from "../../shared/aws/clients";
import { diffSnapshots, SdkMeter, sumOf } from "../../shared/aws/metering";

const credentials = { accessKeyId: "local", secretAccessKey: "local" };
const TABLE = "metering-test";
let dynamo: LocalDynamo;
let sqs: LocalSqs;

beforeAll(async () => {
  dynamo = await startLocalDynamo();
  sqs = await startLocalSqs({ port: 0 });
  await ensureTable(new DynamoDBClient({ region: "us-east-1", endpoint: dynamo.endpoint, credentials }), TABLE);
});
afterAll(async () => {
  await dynamo?.close();
  await sqs?.stop();
});

function meteredDoc(meter: SdkMeter): DocumentClient {
  const client = new DynamoDBClient({ region: "us-east-1", endpoint: dynamo.endpoint, credentials });
  meter.attach(client, "dynamodb");
  return documentClient(client);
}

const item = (pk: string, sk: string, bytes: number) => ({ pk, sk, body: "x".repeat(bytes) });

describe("SdkMeter on DynamoDB (dynalite)", () => {
  it("counts calls and sums the capacity DynamoDB reports, by DynamoDB's size rules", async () => {
    // Prepare
    const meter = new SdkMeter();
    const doc = meteredDoc(meter);
    // Act: a ~0.5 KB put (1 WRU), a ~2.5 KB put (3 WRU), a strongly consistent get of the
    // big item (1 RRU: <= 4 KB), an eventually consistent one (0.5 RRU), a query over both (~3 KB -> 1 RRU).
    await doc.send(new PutCommand({ TableName: TABLE, Item: item("P#1", "A", 500) }));
    await doc.send(new PutCommand({ TableName: TABLE, Item: item("P#1", "B", 2500) }));
    await doc.send(new GetCommand({ TableName: TABLE, Key: { pk: "P#1", sk: "B" }, ConsistentRead: true }));
    await doc.send(new GetCommand({ TableName: TABLE, Key: { pk: "P#1", sk: "B" } }));
    await doc.send(new QueryCommand({ TableName: TABLE, KeyConditionExpression: "pk = :pk", ExpressionAttributeValues: { ":pk": "P#1" }, ConsistentRead: true }));
    // Assess
    const tallies = meter.snapshot();
    expect(tallies["dynamodb:PutItem"]).toMatchObject({ calls: 2, writeUnits: 4, errors: 0 });
    expect(tallies["dynamodb:GetItem"]).toMatchObject({ calls: 2, readUnits: 1.5 });
    expect(tallies["dynamodb:Query"]).toMatchObject({ calls: 1, readUnits: 1 });
    expect(sumOf(tallies, "dynamodb", "writeUnits")).toBe(4);
  });

  it("charges a Query that matches nothing one read request, as DynamoDB does", async () => {
    const meter = new SdkMeter();
    const doc = meteredDoc(meter);
    const query = (consistent: boolean) =>
      doc.send(new QueryCommand({ TableName: TABLE, KeyConditionExpression: "pk = :pk", ExpressionAttributeValues: { ":pk": "NOTHING" }, ConsistentRead: consistent }));
    await query(true);
    await query(false);
    expect(meter.snapshot()["dynamodb:Query"]).toMatchObject({ calls: 2, readUnits: 1.5 });
  });

  it("charges a write whose condition failed one write unit and still rethrows the error", async () => {
    const meter = new SdkMeter();
    const doc = meteredDoc(meter);
    await doc.send(new PutCommand({ TableName: TABLE, Item: item("P#2", "A", 10) }));
    const failed = doc.send(
      new UpdateCommand({ TableName: TABLE, Key: { pk: "P#2", sk: "A" }, UpdateExpression: "SET n = :n", ConditionExpression: "attribute_not_exists(pk)", ExpressionAttributeValues: { ":n": 1 } }),
    );
    await expect(failed).rejects.toMatchObject({ name: "ConditionalCheckFailedException" });
    expect(meter.snapshot()["dynamodb:UpdateItem"]).toMatchObject({ calls: 1, errors: 1, conditionFailures: 1, writeUnits: 1 });
  });

  it("keeps a capacity setting the caller chose", async () => {
    const meter = new SdkMeter();
    const doc = meteredDoc(meter);
    const out = await doc.send(new PutCommand({ TableName: TABLE, Item: item("P#3", "A", 10), ReturnConsumedCapacity: "INDEXES" }));
    expect(out.ConsumedCapacity).toMatchObject({ CapacityUnits: 1, Table: { CapacityUnits: 1 } });
    expect(meter.snapshot()["dynamodb:PutItem"].writeUnits).toBe(1);
  });

  it("diffs snapshots so a window of work can be attributed", async () => {
    const meter = new SdkMeter();
    const doc = meteredDoc(meter);
    await doc.send(new PutCommand({ TableName: TABLE, Item: item("P#4", "A", 10) }));
    const before = meter.snapshot();
    await doc.send(new PutCommand({ TableName: TABLE, Item: item("P#4", "B", 10) }));
    await doc.send(new GetCommand({ TableName: TABLE, Key: { pk: "P#4", sk: "A" }, ConsistentRead: true }));
    const delta = diffSnapshots(before, meter.snapshot());
    expect(delta["dynamodb:PutItem"]).toMatchObject({ calls: 1, writeUnits: 1 });
    expect(delta["dynamodb:GetItem"]).toMatchObject({ calls: 1, readUnits: 1 });
  });
});

describe("SdkMeter on SQS and through createAwsClients", () => {
  it("bills SQS requests per 64 KB chunk", async () => {
    const meter = new SdkMeter();
    const client = new SQSClient({ region: "us-east-1", endpoint: sqs.endpoint, credentials });
    meter.attach(client, "sqs");
    const { queueUrl } = await createFifoQueueWithDlq(client, { name: "metering", visibilityTimeoutSeconds: 30, maxReceiveCount: 3 });
    const send = (body: string, id: string) =>
      client.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body, MessageGroupId: "g", MessageDeduplicationId: id }));
    await send("small", "a");
    await send("y".repeat(100 * 1024), "b");
    expect(meter.snapshot()["sqs:SendMessage"]).toMatchObject({ calls: 2, billedRequests: 3 });
  });

  it("leaves clients unmetered unless a meter is configured", async () => {
    const runtime = { region: "us-east-1", tableName: TABLE, endpoints: { dynamodb: dynamo.endpoint }, credentials };
    const meter = new SdkMeter();
    const plain = createAwsClients(runtime);
    await plain.dynamo.send(new PutCommand({ TableName: TABLE, Item: item("P#5", "A", 10) }));
    const metered = createAwsClients({ ...runtime, meter });
    const out = await metered.dynamo.send(new PutCommand({ TableName: TABLE, Item: item("P#5", "B", 10) }));
    expect(meter.snapshot()).toEqual({ "dynamodb:PutItem": expect.objectContaining({ calls: 1, writeUnits: 1 }) });
    // The capacity request is the meter's, not the caller's: it is visible only when metering is on.
    expect(out.ConsumedCapacity).toMatchObject({ CapacityUnits: 1 });
  });
});
