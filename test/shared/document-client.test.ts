import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { BatchGetCommand, BatchWriteCommand, DeleteCommand, GetCommand, PutCommand, QueryCommand, ScanCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureTable, startLocalDynamo, type LocalDynamo } from "../../infra/local/dynamo";
import { documentClient, type DocumentClient } from "../../shared/aws/document-client";

const TABLE = "document-client-test";
const credentials = { accessKeyId: "local", secretAccessKey: "local" };
let dynamo: LocalDynamo;
let client: DynamoDBClient;
let doc: DocumentClient;
const seenOperations: string[] = [];

beforeAll(async () => {
  dynamo = await startLocalDynamo();
  // As in production (shared/aws/dynamo-client.ts): middleware resolved once per operation.
  client = new DynamoDBClient({ region: "us-east-1", endpoint: dynamo.endpoint, credentials, cacheMiddleware: true });
  client.middlewareStack.add(
    (next, context) => async (args) => {
      seenOperations.push(String(context.commandName));
      return next(args);
    },
    { step: "initialize", name: "seenOperations" },
  );
  await ensureTable(client, TABLE);
  doc = documentClient(client, { removeUndefinedValues: true });
});
afterAll(async () => {
  client.destroy();
  await dynamo.close();
});

const item = { pk: "DOC#1", sk: "A", n: 3, s: "text", flag: true, list: [1, "two", { three: 3 }], map: { nested: { deep: "yes" } }, tags: new Set(["x", "y"]), nothing: null };

describe("documentClient (lib-dynamodb's commands over the plain client)", () => {
  it("round-trips native values through Put, Get, Update and Delete, dropping undefined ones", async () => {
    await doc.send(new PutCommand({ TableName: TABLE, Item: { ...item, gone: undefined }, ConditionExpression: "attribute_not_exists(pk)" }));
    const got = await doc.send(new GetCommand({ TableName: TABLE, Key: { pk: "DOC#1", sk: "A" }, ConsistentRead: true }));
    expect(got.Item).toEqual(item);
    expect(got.$metadata.httpStatusCode).toBe(200);

    const updated = await doc.send(
      new UpdateCommand({ TableName: TABLE, Key: { pk: "DOC#1", sk: "A" }, UpdateExpression: "SET n = n + :one, #map.added = :list", ExpressionAttributeNames: { "#map": "map" }, ExpressionAttributeValues: { ":one": 1, ":list": ["a"] }, ReturnValues: "ALL_NEW" }),
    );
    expect(updated.Attributes).toMatchObject({ n: 4, map: { nested: { deep: "yes" }, added: ["a"] } });

    const deleted = await doc.send(new DeleteCommand({ TableName: TABLE, Key: { pk: "DOC#1", sk: "A" }, ConditionExpression: "n = :n", ExpressionAttributeValues: { ":n": 4 }, ReturnValues: "ALL_OLD" }));
    expect(deleted.Attributes?.s).toBe("text");
    expect((await doc.send(new GetCommand({ TableName: TABLE, Key: { pk: "DOC#1", sk: "A" } }))).Item).toBeUndefined();
  });

  it("raises the service's own error for a failed condition", async () => {
    await doc.send(new PutCommand({ TableName: TABLE, Item: { pk: "DOC#2", sk: "A" } }));
    await expect(doc.send(new PutCommand({ TableName: TABLE, Item: { pk: "DOC#2", sk: "A" }, ConditionExpression: "attribute_not_exists(pk)" }))).rejects.toMatchObject({
      name: "ConditionalCheckFailedException",
    });
  });

  it("pages a Query with LastEvaluatedKey / ExclusiveStartKey, and scans", async () => {
    for (const sk of ["1", "2", "3"]) await doc.send(new PutCommand({ TableName: TABLE, Item: { pk: "DOC#Q", sk, value: Number(sk) } }));
    const query = (start?: Record<string, unknown>) =>
      doc.send(new QueryCommand({ TableName: TABLE, KeyConditionExpression: "pk = :pk", ExpressionAttributeValues: { ":pk": "DOC#Q" }, Limit: 2, ...(start ? { ExclusiveStartKey: start } : {}) }));
    const first = await query();
    expect(first.Items?.map((i) => i.value)).toEqual([1, 2]);
    expect(first.LastEvaluatedKey).toEqual({ pk: "DOC#Q", sk: "2" });
    const second = await query(first.LastEvaluatedKey);
    expect(second.Items).toEqual([{ pk: "DOC#Q", sk: "3", value: 3 }]);

    const scanned = await doc.send(new ScanCommand({ TableName: TABLE, FilterExpression: "pk = :pk", ExpressionAttributeValues: { ":pk": "DOC#Q" } }));
    expect(scanned.Items?.map((i) => i.sk).sort()).toEqual(["1", "2", "3"]);
  });

  it("reads keys together with BatchGet, answers per table", async () => {
    const out = await doc.send(new BatchGetCommand({ RequestItems: { [TABLE]: { Keys: [{ pk: "DOC#Q", sk: "1" }, { pk: "DOC#Q", sk: "3" }, { pk: "DOC#none", sk: "x" }], ConsistentRead: true } } }));
    expect(out.Responses?.[TABLE]?.map((i) => i.value).sort()).toEqual([1, 3]);
    expect(out.UnprocessedKeys?.[TABLE]?.Keys ?? []).toEqual([]);
  });

  it("refuses what it does not translate instead of sending it unmarshalled", async () => {
    await expect(doc.send(new PutCommand({ TableName: TABLE, Item: { pk: "DOC#3", sk: "A" }, Expected: { pk: { Exists: false } } }))).rejects.toThrow(/legacy parameter Expected/);
    await expect(doc.send(new BatchWriteCommand({ RequestItems: { [TABLE]: [{ PutRequest: { Item: { pk: "DOC#3", sk: "A" } } }] } }))).rejects.toThrow(/BatchWriteCommand is not a supported/);
    expect((await doc.send(new GetCommand({ TableName: TABLE, Key: { pk: "DOC#3", sk: "A" } }))).Item).toBeUndefined();
  });

  it("sends every call through the client's middleware, resolved once per operation", () => {
    // Added before the first call, the middleware saw every operation (the cached handlers include it).
    expect(new Set(seenOperations.filter((name) => !name.endsWith("TableCommand")))).toEqual(new Set(["GetItemCommand", "PutItemCommand", "UpdateItemCommand", "DeleteItemCommand", "QueryCommand", "ScanCommand", "BatchGetItemCommand"]));
    expect(seenOperations.filter((name) => name === "PutItemCommand").length).toBeGreaterThanOrEqual(5);
  });
});
