import { ApiGatewayManagementApiClient, DeleteConnectionCommand, PostToConnectionCommand } from "@aws-sdk/client-apigatewaymanagementapi";
import {
  DeleteItemCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  ScanCommand,
  TransactWriteItemsCommand,
} from "@aws-sdk/client-dynamodb";
import { InvokeCommand, LambdaClient } from "@aws-sdk/client-lambda";
import { GetSecretValueCommand, SecretsManagerClient } from "@aws-sdk/client-secrets-manager";
import { DescribeExecutionCommand, SFNClient, StartExecutionCommand } from "@aws-sdk/client-sfn";
import { CreateQueueCommand, GetQueueAttributesCommand, ReceiveMessageCommand, SendMessageBatchCommand, SendMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type AwsEdge, type EdgeCall, type LocalServiceHandler, type LocalServiceRequest, startAwsEdge } from "../../infra/local/aws-edge";
import { ensureTable, type LocalDynamo, startLocalDynamo } from "../../infra/local/dynamo";
import type { IamStatement } from "../../infra/local/iam/policy";
import { type EdgeRequest, requestActions } from "../../infra/local/iam/request-actions";
import { createLocalSecretsManager, type LocalSecretsManager } from "../../infra/local/secrets-manager";
import { type LocalSqs, startLocalSqs } from "../../infra/local/sqs";

const REGION = "us-east-1";
const ACCOUNT = "000000000000";
const ADMIN_KEY = "admin-key";
const RUNNER_KEY = "runner-key";
const RUNNER = `arn:aws:sts::${ACCOUNT}:assumed-role/RunnerRole/runner`;
const TABLE = "Sessions";
const TABLE_ARN = `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${TABLE}`;
const QUEUE = "runs.fifo";
const QUEUE_ARN = `arn:aws:sqs:${REGION}:${ACCOUNT}:${QUEUE}`;
const WORKER_ARN = `arn:aws:lambda:${REGION}:${ACCOUNT}:function:worker`;
const MACHINE_ARN = `arn:aws:states:${REGION}:${ACCOUNT}:stateMachine:Runner`;
const API_ID = "abc123";

/** What a CDK stack would grant the runner function (as the synthesized template's statements). */
const RUNNER_STATEMENTS: IamStatement[] = [
  { Effect: "Allow", Action: ["dynamodb:GetItem", "dynamodb:PutItem"], Resource: [TABLE_ARN, `${TABLE_ARN}/index/*`] },
  { Sid: "NeverDeleteSessions", Effect: "Deny", Action: "dynamodb:DeleteItem", Resource: TABLE_ARN },
  { Effect: "Allow", Action: ["sqs:SendMessage", "sqs:GetQueueAttributes"], Resource: QUEUE_ARN },
  { Effect: "Allow", Action: "secretsmanager:GetSecretValue", Resource: `arn:aws:secretsmanager:${REGION}:${ACCOUNT}:secret:api-key-??????` },
  { Effect: "Allow", Action: "lambda:InvokeFunction", Resource: WORKER_ARN },
  { Effect: "Allow", Action: "states:StartExecution", Resource: MACHINE_ARN },
  { Effect: "Allow", Action: "execute-api:ManageConnections", Resource: `arn:aws:execute-api:${REGION}:${ACCOUNT}:${API_ID}/prod/POST/@connections/*` },
];

const denial = (action: string, resource: string) =>
  `User: ${RUNNER} is not authorized to perform: ${action} on resource: ${resource} because no identity-based policy allows the ${action} action`;

let dynamo: LocalDynamo;
let sqs: LocalSqs;
let secrets: LocalSecretsManager;
let edge: AwsEdge;
let queueUrl: string;
const calls: EdgeCall[] = [];
const handled: LocalServiceRequest[] = [];

/** Records what reached it: the edge must forward allowed calls unchanged and stop denied ones. */
function recordingHandler(answer: (request: LocalServiceRequest) => { statusCode: number; body: string; headers?: Record<string, string> }): LocalServiceHandler {
  return async (request) => {
    handled.push(request);
    return answer(request);
  };
}

const lambdaHandler = recordingHandler((request) => ({
  statusCode: 200,
  headers: { "content-type": "application/json", "x-amz-executed-version": "$LATEST" },
  body: JSON.stringify({ echoed: JSON.parse(request.body.toString("utf8")) }),
}));
const managementHandler = recordingHandler(() => ({ statusCode: 200, body: "" }));
const statesHandler = recordingHandler(() => ({
  statusCode: 200,
  headers: { "content-type": "application/x-amz-json-1.0" },
  body: JSON.stringify({ executionArn: `arn:aws:states:${REGION}:${ACCOUNT}:execution:Runner:one`, startDate: 1_700_000_000 }),
}));

function clientConfig(accessKeyId: string) {
  return { region: REGION, endpoint: edge.endpoint, credentials: { accessKeyId, secretAccessKey: "x" }, maxAttempts: 1 };
}

async function errorOf(promise: Promise<unknown>): Promise<{ name: string; message: string; $metadata?: { httpStatusCode?: number } }> {
  try {
    await promise;
  } catch (error) {
    return error as { name: string; message: string };
  }
  throw new Error("expected the call to fail");
}

beforeAll(async () => {
  dynamo = await startLocalDynamo();
  sqs = await startLocalSqs({ port: 0 });
  secrets = createLocalSecretsManager({ region: REGION, accountId: ACCOUNT });
  secrets.create("api-key", "sk-test");
  secrets.create("other-key", "sk-other");
  const queueArns = new Map<string, string>();
  edge = await startAwsEdge({
    region: REGION,
    accountId: ACCOUNT,
    identities: new Map([
      [ADMIN_KEY, { admin: true, principalArn: `arn:aws:iam::${ACCOUNT}:root` }],
      [RUNNER_KEY, { principalArn: RUNNER, statements: RUNNER_STATEMENTS }],
    ]),
    upstreams: {
      dynamodb: dynamo.endpoint,
      sqs: sqs.endpoint,
      secretsmanager: secrets.handler,
      lambda: lambdaHandler,
      "execute-api": managementHandler,
      states: statesHandler,
    },
    queueArnForUrl: (url) => queueArns.get(url),
    secretArnForId: (id) => secrets.arnForId(id),
    onCall: (call) => calls.push(call),
    executeApiIds: [API_ID],
  });
  const admin = new DynamoDBClient(clientConfig(ADMIN_KEY));
  await ensureTable(admin, TABLE);
  admin.destroy();
  const adminSqs = new SQSClient(clientConfig(ADMIN_KEY));
  queueUrl = (await adminSqs.send(new CreateQueueCommand({ QueueName: QUEUE, Attributes: { FifoQueue: "true" } }))).QueueUrl ?? "";
  const attributes = await adminSqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ["QueueArn"] }));
  queueArns.set(queueUrl, attributes.Attributes?.QueueArn ?? "");
  adminSqs.destroy();
});

afterAll(async () => {
  await edge.close();
  await sqs.stop();
  await dynamo.close();
});

beforeEach(() => {
  calls.length = 0;
  handled.length = 0;
});

describe("aws edge: DynamoDB (in front of dynalite)", () => {
  let client: DynamoDBClient;
  beforeAll(() => {
    client = new DynamoDBClient(clientConfig(RUNNER_KEY));
  });
  afterAll(() => client.destroy());

  it("passes granted calls through to the emulator", async () => {
    await client.send(new PutItemCommand({ TableName: TABLE, Item: { pk: { S: "s#1" }, sk: { S: "meta" }, title: { S: "hello" } } }));

    const read = await client.send(new GetItemCommand({ TableName: TABLE, Key: { pk: { S: "s#1" }, sk: { S: "meta" } } }));

    expect(read.Item?.title).toEqual({ S: "hello" });
    expect(calls.map((call) => [call.action, call.principalArn, call.statusCode, call.denied])).toEqual([
      ["dynamodb:PutItem", RUNNER, 200, false],
      ["dynamodb:GetItem", RUNNER, 200, false],
    ]);
    expect(JSON.parse(calls[1].responseBody.toString("utf8")).Item.title).toEqual({ S: "hello" });
  });

  it("refuses an ungranted action with AccessDeniedException naming action and resource", async () => {
    const error = await errorOf(client.send(new ScanCommand({ TableName: TABLE })));

    expect(error.name).toBe("AccessDeniedException");
    expect(error.message).toBe(denial("dynamodb:Scan", TABLE_ARN));
    expect(error.$metadata?.httpStatusCode).toBe(400);
    expect(calls).toMatchObject([{ action: "dynamodb:Scan", statusCode: 400, denied: true }]);
  });

  it("refuses an explicitly denied action, saying so", async () => {
    const error = await errorOf(client.send(new DeleteItemCommand({ TableName: TABLE, Key: { pk: { S: "s#1" }, sk: { S: "meta" } } })));

    expect(error.name).toBe("AccessDeniedException");
    expect(error.message).toBe(
      `User: ${RUNNER} is not authorized to perform: dynamodb:DeleteItem on resource: ${TABLE_ARN} with an explicit deny in an identity-based policy`,
    );
  });

  it("authorises a transaction item by item and refuses it on the first ungranted item action", async () => {
    const key = { pk: { S: "s#2" }, sk: { S: "meta" } };
    const transaction = new TransactWriteItemsCommand({
      TransactItems: [
        { Put: { TableName: TABLE, Item: { ...key, n: { N: "1" } } } },
        { Update: { TableName: TABLE, Key: { pk: { S: "s#1" }, sk: { S: "meta" } }, UpdateExpression: "SET n = :n", ExpressionAttributeValues: { ":n": { N: "2" } } } },
      ],
    });

    const error = await errorOf(client.send(transaction));
    const read = await client.send(new GetItemCommand({ TableName: TABLE, Key: key }));

    expect(error.name).toBe("AccessDeniedException");
    expect(error.message).toBe(denial("dynamodb:UpdateItem", TABLE_ARN));
    expect(read.Item).toBeUndefined();
  });

  it("answers an unknown access key with UnrecognizedClientException", async () => {
    const stranger = new DynamoDBClient(clientConfig("nobody"));

    const error = await errorOf(stranger.send(new GetItemCommand({ TableName: TABLE, Key: { pk: { S: "x" }, sk: { S: "y" } } })));
    stranger.destroy();

    expect(error.name).toBe("UnrecognizedClientException");
    expect(error.message).toBe("The security token included in the request is invalid.");
    expect(calls).toMatchObject([{ principalArn: undefined, denied: true, statusCode: 403 }]);
  });

  it("follows identity changes made after start", async () => {
    const key = "late-key";
    const late = new DynamoDBClient(clientConfig(key));
    const get = () => late.send(new GetItemCommand({ TableName: TABLE, Key: { pk: { S: "s#1" }, sk: { S: "meta" } } }));

    edge.setIdentity(key, { principalArn: "arn:aws:sts::000000000000:assumed-role/Late/fn", statements: [{ Effect: "Allow", Action: "dynamodb:*", Resource: "*" }] });
    const allowed = await get();
    edge.removeIdentity(key);
    const removed = await errorOf(get());
    late.destroy();

    expect(allowed.Item?.title).toEqual({ S: "hello" });
    expect(removed.name).toBe("UnrecognizedClientException");
  });
});

describe("aws edge: SQS (in front of fauxqs)", () => {
  let client: SQSClient;
  beforeAll(() => {
    client = new SQSClient(clientConfig(RUNNER_KEY));
  });
  afterAll(() => client.destroy());

  it("forwards the Host header verbatim: fauxqs builds queue URLs on the edge's port", () => {
    expect(new URL(queueUrl).port).toBe(new URL(edge.endpoint).port);
  });

  it("passes SendMessage and its batch form (authorised as sqs:SendMessage) through", async () => {
    const single = await client.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: "one", MessageGroupId: "g", MessageDeduplicationId: "d1" }));
    const batch = await client.send(
      new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: [{ Id: "a", MessageBody: "two", MessageGroupId: "g", MessageDeduplicationId: "d2" }] }),
    );

    expect(single.MessageId).toBeTruthy();
    expect(batch.Successful).toHaveLength(1);
    expect(calls.map((call) => call.action)).toEqual(["sqs:SendMessage", "sqs:SendMessage"]);
  });

  it("refuses ReceiveMessage: the SDK names the error from x-amzn-query-error", async () => {
    const error = await errorOf(client.send(new ReceiveMessageCommand({ QueueUrl: queueUrl })));

    expect(error.name).toBe("AccessDenied");
    expect(error.message).toBe(denial("sqs:ReceiveMessage", QUEUE_ARN));
  });

  it("an unknown access key: SQS's query-compatible name is InvalidClientTokenId", async () => {
    const stranger = new SQSClient(clientConfig("nobody"));

    const error = await errorOf(stranger.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: "x", MessageGroupId: "g" })));
    stranger.destroy();

    expect(error.name).toBe("InvalidClientTokenId");
    expect(error.message).toBe("The security token included in the request is invalid.");
  });
});

describe("aws edge: Secrets Manager, Lambda, Step Functions, API Gateway Management API", () => {
  it("Secrets Manager: reads a granted secret by name; another secret is refused on its real ARN", async () => {
    const client = new SecretsManagerClient(clientConfig(RUNNER_KEY));

    const value = await client.send(new GetSecretValueCommand({ SecretId: "api-key" }));
    const error = await errorOf(client.send(new GetSecretValueCommand({ SecretId: "other-key" })));
    client.destroy();

    expect(value.SecretString).toBe("sk-test");
    expect(error.name).toBe("AccessDeniedException");
    expect(error.message).toBe(denial("secretsmanager:GetSecretValue", secrets.arnForId("other-key") ?? ""));
  });

  it("Lambda: invokes the granted function; a qualified ARN needs its own grant", async () => {
    const client = new LambdaClient(clientConfig(RUNNER_KEY));

    const invoked = await client.send(new InvokeCommand({ FunctionName: "worker", Payload: Buffer.from(JSON.stringify({ n: 1 })) }));
    const error = await errorOf(client.send(new InvokeCommand({ FunctionName: "worker", Qualifier: "live", Payload: Buffer.from("{}") })));
    client.destroy();

    expect(JSON.parse(Buffer.from(invoked.Payload ?? []).toString("utf8"))).toEqual({ echoed: { n: 1 } });
    expect(handled.map((request) => [request.method, request.path])).toEqual([["POST", "/2015-03-31/functions/worker/invocations"]]);
    expect(error.name).toBe("AccessDeniedException");
    expect(error.message).toBe(denial("lambda:InvokeFunction", `${WORKER_ARN}:live`));
    expect(error.$metadata?.httpStatusCode).toBe(403);
  });

  it("Step Functions: starts the granted machine; describing an execution is refused", async () => {
    const client = new SFNClient(clientConfig(RUNNER_KEY));
    const executionArn = `arn:aws:states:${REGION}:${ACCOUNT}:execution:Runner:one`;

    const started = await client.send(new StartExecutionCommand({ stateMachineArn: MACHINE_ARN, input: "{}" }));
    const error = await errorOf(client.send(new DescribeExecutionCommand({ executionArn })));
    client.destroy();

    expect(started.executionArn).toBe(executionArn);
    expect(error.name).toBe("AccessDeniedException");
    expect(error.message).toBe(denial("states:DescribeExecution", executionArn));
  });

  it("Management API: strips /@execute-api/{apiId} before forwarding; an ungranted method is Forbidden", async () => {
    const client = new ApiGatewayManagementApiClient({ ...clientConfig(RUNNER_KEY), endpoint: `${edge.endpoint}/@execute-api/${API_ID}/prod` });

    await client.send(new PostToConnectionCommand({ ConnectionId: "conn=1", Data: Buffer.from("hi") }));
    const error = await errorOf(client.send(new DeleteConnectionCommand({ ConnectionId: "conn=1" })));
    client.destroy();

    expect(handled.map((request) => [request.method, request.path, request.body.toString("utf8")])).toEqual([["POST", "/prod/@connections/conn%3D1", "hi"]]);
    expect(calls[0].checks).toEqual([
      { action: "execute-api:ManageConnections", resources: [`arn:aws:execute-api:${REGION}:${ACCOUNT}:${API_ID}/prod/POST/@connections/conn=1`] },
    ]);
    expect(error.name).toBe("ForbiddenException");
    expect(error.message).toBe("Forbidden");
    expect(calls[1]).toMatchObject({ action: "execute-api:ManageConnections", denied: true, statusCode: 403 });
  });

  it("Management API: an API id the edge does not serve is Forbidden", async () => {
    const client = new ApiGatewayManagementApiClient({ ...clientConfig(ADMIN_KEY), endpoint: `${edge.endpoint}/@execute-api/unknown/prod` });

    const error = await errorOf(client.send(new PostToConnectionCommand({ ConnectionId: "c", Data: Buffer.from("hi") })));
    client.destroy();

    expect(error.name).toBe("ForbiddenException");
    expect(handled).toEqual([]);
  });
});

describe("aws edge: S3 wire shape and presigned credentials", () => {
  it("refuses a presigned GET with S3's XML AccessDenied", async () => {
    const credential = encodeURIComponent(`${RUNNER_KEY}/20261201/${REGION}/s3/aws4_request`);

    const response = await fetch(`${edge.endpoint}/bucket/report.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=${credential}`);

    expect(response.status).toBe(403);
    expect(await response.text()).toContain("<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>");
    expect(calls).toMatchObject([{ service: "s3", action: "s3:GetObject", checks: [{ resources: ["arn:aws:s3:::bucket/report.txt"] }] }]);
  });
});

describe("requestActions: what each protocol asks IAM for", () => {
  const context = { region: REGION, accountId: ACCOUNT };

  function signed(service: string, request: Partial<EdgeRequest> & { target?: string; json?: unknown }): EdgeRequest {
    const headers: Record<string, string> = {
      authorization: `AWS4-HMAC-SHA256 Credential=AKID/20261201/${REGION}/${service}/aws4_request, SignedHeaders=host, Signature=abc`,
      ...(request.target ? { "x-amz-target": request.target } : {}),
      ...request.headers,
    };
    const body = request.json === undefined ? (request.body ?? Buffer.alloc(0)) : Buffer.from(JSON.stringify(request.json));
    return { method: request.method ?? "POST", path: request.path ?? "/", headers, body };
  }

  it.each([
    ["Query on an index", "Query", { TableName: "T", IndexName: "byUser" }, [`arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/T/index/byUser`]],
    ["GetItem ignores IndexName", "GetItem", { TableName: "T", IndexName: "x" }, [`arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/T`]],
    ["a table ARN as TableName", "DescribeTable", { TableName: TABLE_ARN }, [TABLE_ARN]],
    ["BatchWriteItem per table", "BatchWriteItem", { RequestItems: { A: [], B: [] } }, ["A", "B"].map((t) => `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${t}`)],
    ["ListTables", "ListTables", {}, ["*"]],
  ])("dynamodb %s", (_, operation, json, resources) => {
    const result = requestActions(signed("dynamodb", { target: `DynamoDB_20120810.${operation}`, json }), context);

    expect(result).toEqual({ service: "dynamodb", checks: [{ action: `dynamodb:${operation}`, resources }] });
  });

  it("dynamodb TransactGetItems: one GetItem check per item", () => {
    const json = { TransactItems: [{ Get: { TableName: "A" } }, { Get: { TableName: "B" } }] };

    const { checks } = requestActions(signed("dynamodb", { target: "DynamoDB_20120810.TransactGetItems", json }), context);

    expect(checks).toEqual(["A", "B"].map((t) => ({ action: "dynamodb:GetItem", resources: [`arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${t}`] })));
  });

  it("sqs: batch actions map to their single-message action; the ARN is derived when the URL is unknown", () => {
    const json = { QueueUrl: "http://localhost:9324/000000000000/jobs", Entries: [] };

    const { checks } = requestActions(signed("sqs", { target: "AmazonSQS.DeleteMessageBatch", json }), context);

    expect(checks).toEqual([{ action: "sqs:DeleteMessage", resources: [`arn:aws:sqs:${REGION}:${ACCOUNT}:jobs`] }]);
  });

  it("sqs: the legacy query protocol, with the queue URL in the form or as the path", () => {
    const form = Buffer.from("Action=ChangeMessageVisibilityBatch&QueueUrl=http%3A%2F%2Fh%2F000000000000%2Fjobs&Version=2012-11-05");
    const inForm = requestActions(signed("sqs", { body: form }), context);
    const asPath = requestActions(signed("sqs", { path: "/000000000000/jobs", body: Buffer.from("Action=ReceiveMessage") }), context);

    expect(inForm.checks).toEqual([{ action: "sqs:ChangeMessageVisibility", resources: [`arn:aws:sqs:${REGION}:${ACCOUNT}:jobs`] }]);
    expect(asPath.checks).toEqual([{ action: "sqs:ReceiveMessage", resources: [`arn:aws:sqs:${REGION}:${ACCOUNT}:jobs`] }]);
  });

  it.each([
    ["StopExecution", { executionArn: "arn:aws:states:us-east-1:0:execution:M:e" }, ["arn:aws:states:us-east-1:0:execution:M:e"]],
    ["ListStateMachines", {}, ["*"]],
  ])("states %s", (operation, json, resources) => {
    const { checks } = requestActions(signed("states", { target: `AWSStepFunctions.${operation}`, json }), context);

    expect(checks).toEqual([{ action: `states:${operation}`, resources }]);
  });

  it("secretsmanager: a name without a resolver becomes the bare secret ARN; an ARN stays as is", () => {
    const byName = requestActions(signed("secretsmanager", { target: "secretsmanager.GetSecretValue", json: { SecretId: "db" } }), context);
    const arn = `arn:aws:secretsmanager:${REGION}:${ACCOUNT}:secret:db-AbCdEf`;
    const byArn = requestActions(signed("secretsmanager", { target: "secretsmanager.DescribeSecret", json: { SecretId: arn } }), context);

    expect(byName.checks).toEqual([{ action: "secretsmanager:GetSecretValue", resources: [`arn:aws:secretsmanager:${REGION}:${ACCOUNT}:secret:db`] }]);
    expect(byArn.checks).toEqual([{ action: "secretsmanager:DescribeSecret", resources: [arn] }]);
  });

  it.each([
    ["/2015-03-31/functions/worker/invocations", WORKER_ARN],
    ["/2015-03-31/functions/worker%3Alive/invocations", `${WORKER_ARN}:live`],
    ["/2015-03-31/functions/worker/invocations?Qualifier=7", `${WORKER_ARN}:7`],
    [`/2015-03-31/functions/${encodeURIComponent(`${ACCOUNT}:function:worker`)}/invocations`, WORKER_ARN],
    [`/2015-03-31/functions/${encodeURIComponent(`${WORKER_ARN}:live`)}/invocations?Qualifier=live`, `${WORKER_ARN}:live`],
    ["/2021-11-15/functions/worker/response-streaming-invocations", WORKER_ARN],
  ])("lambda %s is InvokeFunction on %s", (path, arn) => {
    expect(requestActions(signed("lambda", { path }), context).checks).toEqual([{ action: "lambda:InvokeFunction", resources: [arn] }]);
  });

  it("lambda: other REST paths get a best-effort operation", () => {
    expect(requestActions(signed("lambda", { method: "GET", path: "/2015-03-31/functions/worker/configuration" }), context).checks).toEqual([
      { action: "lambda:GetFunctionConfiguration", resources: [WORKER_ARN] },
    ]);
    expect(requestActions(signed("lambda", { method: "GET", path: "/2015-03-31/functions/" }), context).checks).toEqual([
      { action: "lambda:ListFunctions", resources: ["*"] },
    ]);
  });

  it("execute-api: an escaped @, and the API id taken from the edge prefix (or * without one)", () => {
    const prefixed = requestActions(signed("execute-api", { method: "GET", path: "/@execute-api/abc/prod/%40connections/c%3D1" }), context);
    const bare = requestActions(signed("execute-api", { method: "DELETE", path: "/prod/@connections/c" }), context);

    expect(prefixed.checks).toEqual([{ action: "execute-api:ManageConnections", resources: [`arn:aws:execute-api:${REGION}:${ACCOUNT}:abc/prod/GET/@connections/c=1`] }]);
    expect(bare.checks).toEqual([{ action: "execute-api:ManageConnections", resources: [`arn:aws:execute-api:${REGION}:${ACCOUNT}:*/prod/DELETE/@connections/c`] }]);
  });

  it.each([
    ["GET", "/", "s3:ListAllMyBuckets", "*"],
    ["GET", "/b", "s3:ListBucket", "arn:aws:s3:::b"],
    ["GET", "/b?list-type=2&prefix=x", "s3:ListBucket", "arn:aws:s3:::b"],
    ["PUT", "/b/dir/a%20b.txt", "s3:PutObject", "arn:aws:s3:::b/dir/a b.txt"],
    ["HEAD", "/b/k", "s3:GetObject", "arn:aws:s3:::b/k"],
    ["DELETE", "/b/k", "s3:DeleteObject", "arn:aws:s3:::b/k"],
    ["GET", "/b/k?tagging", "s3:GetObjectTagging", "arn:aws:s3:::b/k"],
  ])("s3 %s %s is %s on %s", (method, path, action, resource) => {
    expect(requestActions(signed("s3", { method, path }), context).checks).toEqual([{ action, resources: [resource] }]);
  });

  it("s3 DeleteObjects: one DeleteObject resource per key", () => {
    const body = Buffer.from("<Delete><Object><Key>a</Key></Object><Object><Key>b&amp;c</Key></Object></Delete>");

    const { checks } = requestActions(signed("s3", { method: "POST", path: "/b?delete", body }), context);

    expect(checks).toEqual([{ action: "s3:DeleteObject", resources: ["arn:aws:s3:::b/a", "arn:aws:s3:::b/b&c"] }]);
  });

  it("an unknown service, or no credential at all, is <service>:Unknown on *", () => {
    expect(requestActions(signed("kinesis", {}), context)).toEqual({ service: "kinesis", checks: [{ action: "kinesis:Unknown", resources: ["*"] }] });
    expect(requestActions({ method: "GET", path: "/", headers: {}, body: Buffer.alloc(0) }, context).service).toBe("unknown");
  });
});
