import { App, RemovalPolicy } from "aws-cdk-lib";
import { Match, Template } from "aws-cdk-lib/assertions";
import { beforeAll, describe, expect, it } from "vitest";
import { readConfig } from "../../infra/config";
import { FUNCTION_KEYS, FUNCTION_KEY_TAG, FUNCTION_SPECS } from "../../infra/functions";
import { PUBLIC_REST_RESOURCES, WS_METHOD_ROUTES, WS_ROUTE_KEYS } from "../../infra/routes";
import { OPENAI_ROUTES } from "../../infra/routes-openai";
import { DLQ_MAX_RECEIVE_COUNT } from "../../infra/stack";
import { synthesizeTemplate, type CfnTemplate } from "../../infra/synth";
import {
  actionsOf,
  flattenJoin,
  logicalIdOfFunction,
  resourcesOf,
  resourcesOfType,
  statementsFor,
  statementsOfFunction,
  type Statement,
} from "./helpers";

let json: CfnTemplate;
let template: Template;

beforeAll(() => {
  json = synthesizeTemplate({ bundling: false });
  template = Template.fromJSON(json);
});

const STATE_MACHINE_NAME = "AgentRunner-run-loop";
const LOOP_STATE_MACHINE_NAME = "AgentRunner-run-continued";
const STATES_ARN_PREFIX = "arn:${AWS::Partition}:states:${AWS::Region}:${AWS::AccountId}";

describe("resources", () => {
  it("has exactly the expected resource counts", () => {
    template.resourceCountIs("AWS::DynamoDB::Table", 1);
    // The run queue, its dead-letter queue, and the failure destinations of asynchronous invocations (ws-api's, the sweeper's).
    template.resourceCountIs("AWS::SQS::Queue", 4);
    template.resourceCountIs("AWS::Lambda::Function", 9);
    // The run machine and the loop machine (infra/state-machine.ts).
    template.resourceCountIs("AWS::StepFunctions::StateMachine", 2);
    template.resourceCountIs("AWS::ApiGateway::RestApi", 1);
    template.resourceCountIs("AWS::ApiGatewayV2::Api", 1);
    template.resourceCountIs("AWS::ApiGatewayV2::Route", WS_ROUTE_KEYS.length);
    template.resourceCountIs("AWS::SecretsManager::Secret", 1);
    // The dispatcher on the run queue; ws-api on its failure records (it answers the frame's request id).
    template.resourceCountIs("AWS::Lambda::EventSourceMapping", 2);
    template.resourceCountIs("AWS::Events::Rule", 2);
  });

  it("has a single pk/sk table with TTL, on-demand billing and PITR, retained by default", () => {
    template.hasResource("AWS::DynamoDB::Table", {
      DeletionPolicy: "Retain",
      Properties: {
        KeySchema: [
          { AttributeName: "pk", KeyType: "HASH" },
          { AttributeName: "sk", KeyType: "RANGE" },
        ],
        AttributeDefinitions: [
          { AttributeName: "pk", AttributeType: "S" },
          { AttributeName: "sk", AttributeType: "S" },
        ],
        TimeToLiveSpecification: { AttributeName: "expiresAt", Enabled: true },
        BillingMode: "PAY_PER_REQUEST",
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      },
    });
  });

  it("has a FIFO run queue with explicit dedup, SSE, 6x visibility and a FIFO DLQ redrive", () => {
    const [[dlqId]] = resourcesOfType(json, "AWS::SQS::Queue").filter(([, q]) => !q.Properties?.RedrivePolicy);
    template.hasResourceProperties("AWS::SQS::Queue", {
      FifoQueue: true,
      ContentBasedDeduplication: false,
      SqsManagedSseEnabled: true,
      VisibilityTimeout: 6 * FUNCTION_SPECS.dispatcher.timeoutSeconds,
      RedrivePolicy: { deadLetterTargetArn: { "Fn::GetAtt": [dlqId, "Arn"] }, maxReceiveCount: 5 },
    });
    expect(DLQ_MAX_RECEIVE_COUNT).toBe(5);
    expect(json.Resources?.[dlqId].Properties).toMatchObject({
      FifoQueue: true,
      SqsManagedSseEnabled: true,
      MessageRetentionPeriod: 14 * 24 * 3600,
    });
  });

  it("feeds the dispatcher from the run queue with partial batch failures", () => {
    template.hasResourceProperties("AWS::Lambda::EventSourceMapping", {
      FunctionName: { Ref: logicalIdOfFunction(json, "dispatcher") },
      BatchSize: 10,
      FunctionResponseTypes: ["ReportBatchItemFailures"],
    });
  });

  it("runs the sweeper every minute", () => {
    template.hasResourceProperties("AWS::Events::Rule", {
      ScheduleExpression: "rate(1 minute)",
      Targets: [Match.objectLike({ Arn: { "Fn::GetAtt": [logicalIdOfFunction(json, "sweeper"), "Arn"] } })],
    });
  });

  it("runs the sweeper when a run execution of either machine ends FAILED, TIMED_OUT or ABORTED", () => {
    const rules = resourcesOfType(json, "AWS::Events::Rule").filter(([, r]) => r.Properties?.EventPattern);
    expect(rules).toHaveLength(1);
    const [[, rule]] = rules;
    const pattern = rule.Properties?.EventPattern as { source: string[]; "detail-type": string[]; detail: { status: string[]; stateMachineArn: unknown[] } };
    expect(pattern.source).toEqual(["aws.states"]);
    expect(pattern["detail-type"]).toEqual(["Step Functions Execution Status Change"]);
    expect(pattern.detail.status).toEqual(["FAILED", "TIMED_OUT", "ABORTED"]);
    expect(pattern.detail.stateMachineArn.map(flattenJoin)).toEqual([
      `${STATES_ARN_PREFIX}:stateMachine:${STATE_MACHINE_NAME}`,
      `${STATES_ARN_PREFIX}:stateMachine:${LOOP_STATE_MACHINE_NAME}`,
    ]);
    expect(rule.Properties?.Targets).toEqual([expect.objectContaining({ Arn: { "Fn::GetAtt": [logicalIdOfFunction(json, "sweeper"), "Arn"] } })]);
  });

  it("exports the URLs, the resources, the config version, the secret to fill and a curl to try", () => {
    expect(Object.keys(json.Outputs as object).sort()).toEqual(
      ["AlarmTopicArn", "ConfigVersion", "FillSecretCommand", "ProviderKeysSecretArn", "QueueUrl", "RestApiUrl", "StateMachineArn", "TableName", "TryItCommand", "WebSocketUrl"],
    );
  });

  it("alarms on the DLQ, failed and timed-out executions (of both machines) and every function's errors", () => {
    // + RunErrorsAlarm on the runner's own metric (test/infra/observability.test.ts).
    template.resourceCountIs("AWS::CloudWatch::Alarm", 6 + FUNCTION_KEYS.length);
    const alarm = (metric: string, namespace: string) =>
      template.hasResourceProperties("AWS::CloudWatch::Alarm", {
        MetricName: metric,
        Namespace: namespace,
        Threshold: 1,
        ComparisonOperator: "GreaterThanOrEqualToThreshold",
      });
    alarm("ApproximateNumberOfMessagesVisible", "AWS/SQS");
    alarm("ExecutionsFailed", "AWS/States");
    alarm("ExecutionsTimedOut", "AWS/States");
    alarm("Errors", "AWS/Lambda");
  });
});

describe("functions", () => {
  it.each(FUNCTION_KEYS)("%s runs on nodejs22.x arm64 with its table row's timeout and memory", (key) => {
    const fn = json.Resources?.[logicalIdOfFunction(json, key)];
    expect(fn?.Properties).toMatchObject({
      Runtime: "nodejs22.x",
      Architectures: ["arm64"],
      Timeout: FUNCTION_SPECS[key].timeoutSeconds,
      MemorySize: FUNCTION_SPECS[key].memoryMb,
      Tags: expect.arrayContaining([{ Key: FUNCTION_KEY_TAG, Value: key }]),
      LoggingConfig: { LogGroup: { Ref: expect.any(String) } },
    });
  });

  it("pins the timeouts of the brief", () => {
    const timeouts = Object.fromEntries(FUNCTION_KEYS.map((k) => [k, FUNCTION_SPECS[k].timeoutSeconds]));
    expect(timeouts).toEqual({
      "rest-api": 29, "ws-api": 60, dispatcher: 30,
      attempt: 900, decide: 30, "run-finalize": 60, sweeper: 120, "openai-api": 900, authorizer: 10,
    });
    expect(FUNCTION_SPECS.attempt.memoryMb).toBe(1024);
  });

  it("keeps function logs 30 days", () => {
    const groups = resourcesOfType(json, "AWS::Logs::LogGroup");
    expect(groups.length).toBeGreaterThanOrEqual(FUNCTION_KEYS.length);
    for (const [, group] of groups) expect(group.Properties?.RetentionInDays).toBe(30);
  });

  it.each([
    ["rest-api", ["QUEUE_URL", "AUTH_TOKEN_SHA256", "WS_MANAGEMENT_ENDPOINT", "STATE_MACHINE_ARN", "LOOP_STATE_MACHINE_ARN"]],
    ["ws-api", ["QUEUE_URL", "AUTH_TOKEN_SHA256", "WS_MANAGEMENT_ENDPOINT", "STATE_MACHINE_ARN", "LOOP_STATE_MACHINE_ARN"]],
    ["dispatcher", ["STATE_MACHINE_ARN", "LOOP_STATE_MACHINE_ARN"]],
    ["attempt", ["WS_MANAGEMENT_ENDPOINT", "PROVIDER_KEYS_SECRET_ARN", "PROVIDER_KEYS_MAX_AGE_SECONDS", "STATE_MACHINE_ARN", "LOOP_STATE_MACHINE_ARN"]],
    ["decide", ["WS_MANAGEMENT_ENDPOINT", "STATE_MACHINE_ARN", "LOOP_STATE_MACHINE_ARN"]],
    ["run-finalize", ["WS_MANAGEMENT_ENDPOINT", "STATE_MACHINE_ARN", "LOOP_STATE_MACHINE_ARN"]],
    ["sweeper", ["STATE_MACHINE_ARN", "LOOP_STATE_MACHINE_ARN", "WS_MANAGEMENT_ENDPOINT"]],
  ] as const)("%s gets exactly its environment", (key, extra) => {
    const env = json.Resources?.[logicalIdOfFunction(json, key)].Properties?.Environment as {
      Variables: Record<string, unknown>;
    };
    // No NODE_OPTIONS: stacks are mapped by the bundle itself (shared/runtime/source-mapped-stacks.ts), not at every cold start.
    const base = ["TABLE_NAME", "POWERTOOLS_SERVICE_NAME", "POWERTOOLS_LOG_LEVEL", "POWERTOOLS_METRICS_NAMESPACE", "POWERTOOLS_TRACE_ENABLED"];
    expect(Object.keys(env.Variables).sort()).toEqual([...base, ...extra].sort());
    expect(env.Variables).toMatchObject({
      POWERTOOLS_SERVICE_NAME: "agent-runner",
      POWERTOOLS_LOG_LEVEL: "INFO",
    });
  });

  it.each(["rest-api", "ws-api", "decide", "openai-api"] as const)("%s may answer the run machine's task tokens (SendTaskSuccess on the machine)", (key) => {
    const statement = statementsFor(statementsOfFunction(json, key), "states:").find((s) => actionsOf(s).includes("states:SendTaskSuccess"));
    expect(statement).toBeDefined();
    expect(actionsOf(statement!)).toEqual(["states:SendTaskSuccess"]);
  });

  it("points WS_MANAGEMENT_ENDPOINT at the prod stage's https callback URL", () => {
    const fn = json.Resources?.[logicalIdOfFunction(json, "attempt")];
    const endpoint = (fn?.Properties?.Environment as { Variables: Record<string, unknown> }).Variables.WS_MANAGEMENT_ENDPOINT;
    const [[wsApiId]] = resourcesOfType(json, "AWS::ApiGatewayV2::Api");
    expect(endpoint).toEqual({
      "Fn::Join": ["", ["https://", { Ref: wsApiId }, ".execute-api.", { Ref: "AWS::Region" }, ".", { Ref: "AWS::URLSuffix" }, "/prod"]],
    });
  });

  it("gives the attempt a secret ARN, never key material; the model travels in the deployed configuration", () => {
    const env = (json.Resources?.[logicalIdOfFunction(json, "attempt")].Properties?.Environment as {
      Variables: Record<string, unknown>;
    }).Variables;
    const [[secretId, secret]] = resourcesOfType(json, "AWS::SecretsManager::Secret");
    expect(env.MODEL).toBeUndefined();
    expect(env.PROVIDER_KEYS_SECRET_ARN).toEqual({ Ref: secretId });
    expect(env.PROVIDER_KEYS_MAX_AGE_SECONDS).toBe("300");
    expect(JSON.parse(String(secret.Properties?.SecretString))).toEqual({ OPENAI_API_KEY: "", ANTHROPIC_API_KEY: "" });
  });
});

describe("APIs", () => {
  it("routes every WebSocket key to ws-api on $request.body.method", () => {
    template.hasResourceProperties("AWS::ApiGatewayV2::Api", {
      ProtocolType: "WEBSOCKET",
      RouteSelectionExpression: "$request.body.method",
    });
    const keys = resourcesOfType(json, "AWS::ApiGatewayV2::Route").map(([, r]) => r.Properties?.RouteKey);
    expect(keys.sort()).toEqual([...WS_ROUTE_KEYS].sort());
    expect(WS_METHOD_ROUTES).toEqual([
      "connect", "agent", "agent.wait", "sessions.subscribe", "sessions.unsubscribe",
      "sessions.list", "sessions.history", "runs.abort", "events.replay", "agents.list", "chat.abort",
      "plugin.approval.resolve", "exec.approval.resolve", "tools.result",
      "chat.send", "chat.history", "sessions.resolve", "sessions.describe", "sessions.reset", "sessions.patch",
      "models.list", "commands.list", "status", "config.get",
    ]);
    // Two integrations of the same function: synchronous for $connect/$disconnect, asynchronous for methods.
    template.resourceCountIs("AWS::ApiGatewayV2::Integration", 2);
    const integrations = resourcesOfType(json, "AWS::ApiGatewayV2::Integration");
    for (const [, integration] of integrations) {
      expect(integration.Properties).toMatchObject({ IntegrationType: "AWS_PROXY" });
      expect(JSON.stringify(integration.Properties?.IntegrationUri)).toContain(logicalIdOfFunction(json, "ws-api"));
    }
    const asyncIds = integrations
      .filter(([, i]) => (i.Properties?.RequestParameters as Record<string, string> | undefined)?.["integration.request.header.X-Amz-Invocation-Type"] === "'Event'")
      .map(([id]) => id);
    expect(asyncIds).toHaveLength(1);
    for (const [, route] of resourcesOfType(json, "AWS::ApiGatewayV2::Route")) {
      const key = route.Properties?.RouteKey as string;
      const target = JSON.stringify(route.Properties?.Target);
      const isAsync = target.includes(asyncIds[0]);
      expect({ key, isAsync }).toEqual({ key, isAsync: key !== "$connect" && key !== "$disconnect" });
      expect(route.Properties?.RouteResponseSelectionExpression).toBeUndefined();
    }
    template.hasResourceProperties("AWS::ApiGatewayV2::Stage", { StageName: "prod", AutoDeploy: true });
  });

  it("proxies ANY / and ANY /{proxy+} of the REST API's prod stage to rest-api behind the authorizer; health and webhooks are public; the OpenAI routes stream", () => {
    // ANY / and /{proxy+}, the public resources, /v1/{proxy+} (rest-api) and the streamed OpenAI routes.
    template.resourceCountIs("AWS::ApiGateway::Method", 2 + PUBLIC_REST_RESOURCES.length + 1 + OPENAI_ROUTES.length);
    template.hasResourceProperties("AWS::ApiGateway::Resource", { PathPart: "{proxy+}" });
    const authorizerId = resourcesOfType(json, "AWS::ApiGateway::Authorizer")[0]![0];
    const openaiFn = logicalIdOfFunction(json, "openai-api");
    const methods = resourcesOfType(json, "AWS::ApiGateway::Method");
    const [openai, rest] = [methods.filter(([, m]) => JSON.stringify(m.Properties?.Integration).includes(openaiFn)), methods.filter(([, m]) => !JSON.stringify(m.Properties?.Integration).includes(openaiFn))];
    expect(openai).toHaveLength(OPENAI_ROUTES.length);
    // The OpenAI routes are behind the same authorizer.
    for (const [, method] of openai) expect(method.Properties).toMatchObject({ AuthorizationType: "CUSTOM", AuthorizerId: { Ref: authorizerId } });
    for (const [, method] of rest) {
      expect(method.Properties).toMatchObject({ Integration: { Type: "AWS_PROXY" } });
      expect(JSON.stringify(method.Properties?.Integration)).toContain(logicalIdOfFunction(json, "rest-api"));
      const isPublic = method.Properties?.AuthorizationType === "NONE";
      expect(isPublic ? method.Properties?.AuthorizerId : method.Properties).toEqual(isPublic ? undefined : expect.objectContaining({ HttpMethod: "ANY", AuthorizationType: "CUSTOM", AuthorizerId: { Ref: authorizerId } }));
    }
    expect(resourcesOfType(json, "AWS::ApiGateway::Method").filter(([, m]) => m.Properties?.AuthorizationType === "NONE")).toHaveLength(PUBLIC_REST_RESOURCES.length);
    template.hasResourceProperties("AWS::ApiGateway::Stage", {
      StageName: "prod",
      AccessLogSetting: Match.objectLike({ DestinationArn: Match.anyValue() }),
      MethodSettings: [Match.objectLike({ ThrottlingRateLimit: Match.anyValue(), ThrottlingBurstLimit: Match.anyValue() })],
    });
  });

  it("serves the OpenAI routes from openai-api over a 15-minute response-streaming integration", () => {
    const streamed = resourcesOfType(json, "AWS::ApiGateway::Method").filter(([, m]) => JSON.stringify(m.Properties?.Integration).includes(logicalIdOfFunction(json, "openai-api")));
    expect(streamed.map(([, m]) => m.Properties?.HttpMethod).sort()).toEqual(OPENAI_ROUTES.map((r) => r.method).sort());
    for (const [, method] of streamed) {
      expect(method.Properties).toMatchObject({ Integration: { Type: "AWS_PROXY", ResponseTransferMode: "STREAM", TimeoutInMillis: 900_000 } });
      const uri = JSON.stringify(method.Properties?.Integration);
      expect(uri).toContain(logicalIdOfFunction(json, "openai-api"));
      expect(uri).toContain("/response-streaming-invocations");
    }
  });
});

describe("IAM", () => {
  const allStatements = (): Statement[] =>
    resourcesOfType(json, "AWS::IAM::Policy").flatMap(
      ([, p]) => (p.Properties?.PolicyDocument as { Statement: Statement[] }).Statement,
    );
  // Actions AWS only accepts on Resource "*" (Step Functions log delivery, X-Ray).
  const STAR_RESOURCE_ALLOWED = /^(logs:(Create|Get|Update|Delete)LogDelivery|logs:ListLogDeliveries|logs:PutResourcePolicy|logs:DescribeResourcePolicies|logs:DescribeLogGroups|xray:.+)$/;

  it("never grants wildcard actions", () => {
    for (const statement of allStatements()) {
      for (const action of actionsOf(statement)) expect(action).not.toMatch(/\*/);
    }
  });

  it("uses Resource * only for actions that cannot be scoped", () => {
    for (const statement of allStatements().filter((s) => resourcesOf(s).includes("*"))) {
      for (const action of actionsOf(statement)) expect(action).toMatch(STAR_RESOURCE_ALLOWED);
    }
  });

  it.each(FUNCTION_KEYS)("%s gets exactly its DynamoDB item actions on the table ARN", (key) => {
    const [tableId] = resourcesOfType(json, "AWS::DynamoDB::Table")[0];
    const statements = statementsFor(statementsOfFunction(json, key), "dynamodb:");
    expect(statements).toHaveLength(1);
    expect(actionsOf(statements[0]).sort()).toEqual(FUNCTION_SPECS[key].dynamodb.map((a) => `dynamodb:${a}`).sort());
    expect(resourcesOf(statements[0])).toEqual([{ "Fn::GetAtt": [tableId, "Arn"] }]);
  });

  it("pins which functions may delete or batch-write items", () => {
    const can = (action: string) => FUNCTION_KEYS.filter((k) => FUNCTION_SPECS[k].dynamodb.some((a) => a === action));
    expect(can("BatchWriteItem")).toEqual(["attempt"]);
    expect(can("DeleteItem")).toEqual(["rest-api", "ws-api", "dispatcher", "attempt", "decide", "run-finalize", "sweeper", "openai-api"]);
  });

  it("lets exactly the APIs (abort hands a lane on), dispatcher, attempt and decide (hand-off, continue-as-new), run-finalize and sweeper start executions of the two machines", () => {
    template.hasResourceProperties("AWS::StepFunctions::StateMachine", { StateMachineName: STATE_MACHINE_NAME });
    template.hasResourceProperties("AWS::StepFunctions::StateMachine", { StateMachineName: LOOP_STATE_MACHINE_NAME });
    const starters = FUNCTION_KEYS.filter((key) =>
      statementsOfFunction(json, key).some((s) => actionsOf(s).includes("states:StartExecution")),
    );
    expect(starters).toEqual(["rest-api", "ws-api", "dispatcher", "attempt", "decide", "run-finalize", "sweeper"]);
    for (const key of starters) {
      const [statement] = statementsFor(statementsOfFunction(json, key), "states:").filter((s) =>
        actionsOf(s).includes("states:StartExecution"),
      );
      expect(actionsOf(statement)).toEqual(["states:StartExecution"]);
      expect((statement.Resource as unknown[]).map(flattenJoin)).toEqual([
        `${STATES_ARN_PREFIX}:stateMachine:${STATE_MACHINE_NAME}`,
        `${STATES_ARN_PREFIX}:stateMachine:${LOOP_STATE_MACHINE_NAME}`,
      ]);
    }
  });

  it("scopes the sweeper's Describe/StopExecution to the two machines' executions", () => {
    const statement = statementsFor(statementsOfFunction(json, "sweeper"), "states:").find((s) =>
      actionsOf(s).includes("states:StopExecution"),
    );
    expect(actionsOf(statement!).sort()).toEqual(["states:DescribeExecution", "states:StopExecution"]);
    expect((statement!.Resource as unknown[]).map(flattenJoin)).toEqual([
      `${STATES_ARN_PREFIX}:execution:${STATE_MACHINE_NAME}:*`,
      `${STATES_ARN_PREFIX}:execution:${LOOP_STATE_MACHINE_NAME}:*`,
    ]);
  });

  it.each([
    ["rest-api", ["POST"]],
    ["ws-api", ["POST", "GET", "DELETE"]],
    ["attempt", ["POST"]],
    ["decide", ["POST"]],
    ["run-finalize", ["POST"]],
    ["sweeper", ["POST"]],
  ] as const)("%s may manage connections on the prod stage only via %j", (key, methods) => {
    const [statement] = statementsFor(statementsOfFunction(json, key), "execute-api:");
    expect(actionsOf(statement)).toEqual(["execute-api:ManageConnections"]);
    const [[wsApiId]] = resourcesOfType(json, "AWS::ApiGatewayV2::Api");
    const prefix = `arn:\${AWS::Partition}:execute-api:\${AWS::Region}:\${AWS::AccountId}:\${${wsApiId}}/prod`;
    expect(resourcesOf(statement).map(flattenJoin)).toEqual(methods.map((m) => `${prefix}/${m}/@connections/*`));
  });

  it("keeps connection management away from the other functions", () => {
    for (const key of ["dispatcher"] as const) {
      expect(statementsFor(statementsOfFunction(json, key), "execute-api:")).toEqual([]);
    }
  });

  it("lets only ws-api invoke a function, and only itself (the post-connect challenge step)", () => {
    const invokers = FUNCTION_KEYS.filter((key) => statementsFor(statementsOfFunction(json, key), "lambda:").length > 0);
    expect(invokers).toEqual(["ws-api"]);
    const [statement] = statementsFor(statementsOfFunction(json, "ws-api"), "lambda:");
    expect(actionsOf(statement)).toEqual(["lambda:InvokeFunction"]);
    expect(resourcesOf(statement)).toEqual([{ "Fn::GetAtt": [logicalIdOfFunction(json, "ws-api"), "Arn"] }]);
  });

  it("lets only intake functions send to the queue and only the attempt read provider keys", () => {
    const holders = (prefix: string) =>
      FUNCTION_KEYS.filter((key) => statementsFor(statementsOfFunction(json, key), prefix).length > 0);
    const [[runQueueId]] = resourcesOfType(json, "AWS::SQS::Queue").filter(([, q]) => q.Properties?.FifoQueue && q.Properties?.RedrivePolicy);
    const sendsToRunQueue = FUNCTION_KEYS.filter((key) =>
      statementsFor(statementsOfFunction(json, key), "sqs:SendMessage").some((statement) => JSON.stringify(statement.Resource).includes(runQueueId)),
    );
    expect(sendsToRunQueue).toEqual(["rest-api", "ws-api", "openai-api"]);
    expect(holders("secretsmanager:")).toEqual(["attempt"]);
    const receivesFrom = (key: "dispatcher" | "ws-api") =>
      statementsFor(statementsOfFunction(json, key), "sqs:ReceiveMessage").map((statement) => JSON.stringify(statement.Resource));
    expect(holders("sqs:ReceiveMessage")).toEqual(["ws-api", "dispatcher"]);
    // ws-api reads only its own failure records, never the run queue.
    const [[wsFailuresId]] = resourcesOfType(json, "AWS::SQS::Queue").filter(([id]) => id.includes("WsMethodFailures"));
    expect(receivesFrom("ws-api")).toEqual([JSON.stringify({ "Fn::GetAtt": [wsFailuresId, "Arn"] })]);
    expect(receivesFrom("dispatcher").every((resource) => resource.includes(runQueueId))).toBe(true);
  });
});

describe("config", () => {
  const configOf = (context: Record<string, unknown>) => readConfig(new App({ context }).node);

  it("defaults to retain, INFO, no model override, tracing on and no auth digest", () => {
    expect(configOf({})).toMatchObject({
      removalPolicy: RemovalPolicy.RETAIN, logLevel: "INFO", model: undefined, tracing: true, authTokenSha256: "",
    });
  });

  it("accepts destroy for dev stacks and rejects unknown policies", () => {
    expect(configOf({ removalPolicy: "destroy" }).removalPolicy).toBe(RemovalPolicy.DESTROY);
    expect(() => configOf({ removalPolicy: "snapshot" })).toThrow(/removalPolicy/);
  });

  it("refuses anything but a SHA-256 digest as the auth token", () => {
    expect(() => configOf({ authTokenSha256: "my-plaintext-token" })).toThrow(/never the token itself/);
    expect(configOf({ authTokenSha256: "A".repeat(64) }).authTokenSha256).toBe("a".repeat(64));
  });
});
