/**
 * Deploys a cloud assembly onto the local emulators, the way `cdklocal
 * deploy` deploys onto LocalStack: every resource comes from the template's
 * properties, every function runs its staged asset in its own sandboxes with
 * exactly the template's environment (intrinsics resolved to local names,
 * ARNs and URLs) plus what the Lambda runtime itself provides, under its
 * execution role's policy (enforced by the edge on every SDK call).
 *
 * Honoured and ignored template properties are listed in docs/local-deploy.md.
 */
import { CreateTableCommand, DescribeTableCommand, type DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { CreateQueueCommand, type SQSClient } from "@aws-sdk/client-sqs";
import type { CfnResource } from "../../synth";
import { FunctionPool, type LogSink } from "../lambda/pool";
import type { LoadedAssembly } from "./assembly";
import { resourceFacts } from "./facts";
import { roleStatements } from "./iam";
import { resolveValue, type ResolveScope } from "./intrinsics";
import type { IamStatement } from "../iam/policy";

export const LOCAL_SECRET_KEY = "local-secret";

export interface DeployEnvironment {
  region: string;
  accountId: string;
  sqsEndpoint: string;
  /** The edge every function's SDK calls go through. */
  edgeEndpoint: string;
  /** Admin clients straight to the emulators (the deployer is CloudFormation). */
  dynamo: DynamoDBClient;
  sqs: SQSClient;
  /** Creates (or on a restart, finds) the secret; answers its ARN, which becomes the resource's Ref. */
  createSecret(name: string, value: string): Promise<string>;
  logSink: LogSink;
  /** Sandboxes per function when the template reserves none. */
  maxConcurrency: number;
}

export interface DeployedFunction {
  logicalId: string;
  name: string;
  arn: string;
  roleName: string;
  accessKeyId: string;
  statements: IamStatement[];
  pool: FunctionPool;
  environment: Record<string, string>;
  /** Async invocations: retries after a function error (EventInvokeConfig, default 2). */
  maxRetryAttempts: number;
  /** Async invocations: where an event goes once its retries are exhausted (EventInvokeConfig OnFailure; an SQS queue ARN). */
  asyncFailureDestination?: string;
}

export interface DeployedResources {
  scope: ResolveScope;
  functions: Map<string, DeployedFunction>;
  byName: Map<string, DeployedFunction>;
  queueArnForUrl(url: string): string | undefined;
  queueUrlForArn(arn: string): string | undefined;
  tables: string[];
}

/** Creates tables, queues and secrets, and prepares every function's sandboxes. */
export async function deployResources(assembly: LoadedAssembly, env: DeployEnvironment): Promise<DeployedResources> {
  const { template, stackName } = assembly;
  const facts = resourceFacts(template, { region: env.region, accountId: env.accountId, stackName, sqsEndpoint: env.sqsEndpoint });
  const scope: ResolveScope = { region: env.region, accountId: env.accountId, stackName, resources: facts };
  const resources = Object.entries(template.Resources ?? {});
  const tables: string[] = [];
  for (const [logicalId, resource] of resources.filter(([, r]) => r.Type === "AWS::DynamoDB::Table")) {
    tables.push(await createTable(env.dynamo, facts.get(logicalId)!.ref, resolveValue(resource.Properties, scope) as Record<string, unknown>));
  }
  for (const [logicalId, resource] of orderQueues(resources)) {
    const fact = facts.get(logicalId)!;
    const url = await createQueue(env.sqs, fact.attributes.QueueName, resolveValue(resource.Properties ?? {}, scope) as Record<string, unknown>);
    facts.set(logicalId, { ref: url, attributes: { ...fact.attributes, QueueUrl: url } });
  }
  for (const [logicalId, resource] of resources.filter(([, r]) => r.Type === "AWS::SecretsManager::Secret")) {
    const properties = resolveValue(resource.Properties ?? {}, scope) as { Name?: string; SecretString?: string };
    const arn = await env.createSecret(properties.Name ?? `${stackName}-${logicalId}`, properties.SecretString ?? "{}");
    facts.set(logicalId, { ref: arn, attributes: { Id: arn } });
  }
  const statements = roleStatements(template, scope);
  const functions = new Map<string, DeployedFunction>();
  for (const [logicalId, resource] of resources.filter(([, r]) => r.Type === "AWS::Lambda::Function")) {
    const fn = prepareFunction(logicalId, resource, assembly, scope, statements, env, retryAttemptsOf(resources, logicalId));
    const destination = failureDestinationOf(resources, logicalId, scope);
    functions.set(logicalId, destination ? { ...fn, asyncFailureDestination: destination } : fn);
  }
  const queueUrls = new Map<string, string>();
  for (const [, fact] of facts) if (fact.attributes.QueueUrl) queueUrls.set(fact.attributes.QueueUrl, fact.attributes.Arn);
  return {
    scope,
    functions,
    byName: new Map([...functions.values()].map((fn) => [fn.name, fn])),
    queueArnForUrl: (url) => queueUrls.get(url),
    queueUrlForArn: (arn) => [...queueUrls].find(([, a]) => a === arn)?.[0],
    tables,
  };
}

async function createTable(dynamo: DynamoDBClient, name: string, properties: Record<string, unknown>): Promise<string> {
  try {
    await dynamo.send(
      new CreateTableCommand({
        TableName: name,
        AttributeDefinitions: properties.AttributeDefinitions as never,
        KeySchema: properties.KeySchema as never,
        GlobalSecondaryIndexes: properties.GlobalSecondaryIndexes as never,
        LocalSecondaryIndexes: properties.LocalSecondaryIndexes as never,
        BillingMode: (properties.BillingMode as "PAY_PER_REQUEST" | undefined) ?? "PROVISIONED",
        ...(properties.ProvisionedThroughput ? { ProvisionedThroughput: properties.ProvisionedThroughput as never } : {}),
      }),
    );
  } catch (error) {
    // A restart with the same data folder: the table is already there.
    if ((error as { name?: string }).name !== "ResourceInUseException") throw error;
  }
  for (let i = 0; i < 200; i += 1) {
    const out = await dynamo.send(new DescribeTableCommand({ TableName: name }));
    if (out.Table?.TableStatus === "ACTIVE") return name;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`table ${name} did not become ACTIVE`);
}

/** Dead-letter queues first: a RedrivePolicy names its target's ARN. */
function orderQueues(resources: [string, CfnResource][]): [string, CfnResource][] {
  const queues = resources.filter(([, r]) => r.Type === "AWS::SQS::Queue");
  const hasRedrive = ([, r]: [string, CfnResource]) => Boolean(r.Properties?.RedrivePolicy);
  return [...queues.filter((q) => !hasRedrive(q)), ...queues.filter(hasRedrive)];
}

const QUEUE_ATTRIBUTES = ["FifoQueue", "ContentBasedDeduplication", "VisibilityTimeout", "MessageRetentionPeriod", "DelaySeconds", "ReceiveMessageWaitTimeSeconds", "MaximumMessageSize", "DeduplicationScope", "FifoThroughputLimit"];
/** SQS's long-standing 256 KiB message cap, enforced locally when the template sets none. */
const DEFAULT_MAX_MESSAGE_BYTES = "262144";

async function createQueue(sqs: SQSClient, name: string, properties: Record<string, unknown>): Promise<string> {
  const attributes: Record<string, string> = { MaximumMessageSize: DEFAULT_MAX_MESSAGE_BYTES };
  for (const key of QUEUE_ATTRIBUTES) if (properties[key] !== undefined) attributes[key] = String(properties[key]);
  if (properties.RedrivePolicy) attributes.RedrivePolicy = JSON.stringify(properties.RedrivePolicy);
  // SQS's CreateQueue is idempotent for identical attributes.
  const out = await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
  if (!out.QueueUrl) throw new Error(`CreateQueue ${name} answered no QueueUrl`);
  return out.QueueUrl;
}

function retryAttemptsOf(resources: [string, CfnResource][], functionLogicalId: string): number {
  const config = resources.find(([, r]) => r.Type === "AWS::Lambda::EventInvokeConfig" && (r.Properties?.FunctionName as { Ref?: string })?.Ref === functionLogicalId);
  const value = config?.[1].Properties?.MaximumRetryAttempts;
  return typeof value === "number" ? value : 2;
}

function failureDestinationOf(resources: [string, CfnResource][], functionLogicalId: string, scope: ResolveScope): string | undefined {
  const config = resources.find(([, r]) => r.Type === "AWS::Lambda::EventInvokeConfig" && (r.Properties?.FunctionName as { Ref?: string })?.Ref === functionLogicalId);
  const destination = (config?.[1].Properties?.DestinationConfig as { OnFailure?: { Destination?: unknown } } | undefined)?.OnFailure?.Destination;
  return destination === undefined ? undefined : String(resolveValue(destination, scope));
}

function prepareFunction(
  logicalId: string,
  resource: CfnResource,
  assembly: LoadedAssembly,
  scope: ResolveScope,
  statements: Map<string, IamStatement[]>,
  env: DeployEnvironment,
  maxRetryAttempts: number,
): DeployedFunction {
  const properties = resource.Properties ?? {};
  const facts = scope.resources.get(logicalId)!;
  const name = facts.ref;
  const roleLogicalId = roleLogicalIdOf(properties.Role);
  const roleName = roleLogicalId ? scope.resources.get(roleLogicalId)!.ref : `${name}-role`;
  const codeDir = codeDirOf(properties.Code, assembly);
  const timeoutSeconds = Number(properties.Timeout ?? 3);
  const memoryMb = Number(properties.MemorySize ?? 128);
  const templateEnv = localizeUrls((resolveValue((properties.Environment as { Variables?: unknown })?.Variables ?? {}, scope) as Record<string, string>), env.edgeEndpoint);
  const accessKeyId = localAccessKeyId(logicalId);
  const runtimeEnv = lambdaRuntimeEnvironment({ name, codeDir, handler: String(properties.Handler ?? "index.handler"), memoryMb, region: env.region, accessKeyId, edge: env.edgeEndpoint, runtime: String(properties.Runtime ?? "nodejs22.x") });
  const environment = { ...runtimeEnv, ...templateEnv, ...LOCAL_ONLY_ENVIRONMENT };
  const reserved = properties.ReservedConcurrentExecutions;
  const pool = new FunctionPool(
    {
      name,
      arn: facts.attributes.Arn,
      codeDir,
      handler: runtimeEnv._HANDLER,
      timeoutSeconds,
      memoryMb,
      environment,
      // Reserved concurrency caps the function; the local machine's own cap still applies.
      maxConcurrency: typeof reserved === "number" && reserved > 0 ? Math.min(reserved, env.maxConcurrency) : env.maxConcurrency,
    },
    env.logSink,
  );
  return { logicalId, name, arn: facts.attributes.Arn, roleName, accessKeyId, statements: roleLogicalId ? statements.get(roleLogicalId) ?? [] : [], pool, environment, maxRetryAttempts };
}

/** A function's local access key id: stable, so tools outside the stack (SAM's env.json) can act as it. */
export function localAccessKeyId(logicalId: string): string {
  return `LOCAL${logicalId.replace(/[^A-Za-z0-9]/g, "").toUpperCase()}`.slice(0, 32);
}

function roleLogicalIdOf(role: unknown): string | undefined {
  const getAtt = (role as { "Fn::GetAtt"?: string[] } | undefined)?.["Fn::GetAtt"];
  return getAtt?.[0];
}

function codeDirOf(code: unknown, assembly: LoadedAssembly): string {
  const key = (code as { S3Key?: unknown } | undefined)?.S3Key;
  const dir = typeof key === "string" ? assembly.assetDirs.get(key) ?? assembly.assetDirs.get(key.replace(/\.zip$/, "")) : undefined;
  if (!dir) throw new Error(`function code ${JSON.stringify(code)} is not an asset of the cloud assembly ${assembly.dir} (inline and image code are not supported locally)`);
  return dir;
}

/**
 * Set over the template's environment, each for a reason the emulators
 * cannot avoid: there is no X-Ray daemon on loopback, so the Powertools
 * tracer is off (AWS: on when the function's TracingConfig is Active).
 */
const LOCAL_ONLY_ENVIRONMENT: Readonly<Record<string, string>> = { POWERTOOLS_TRACE_ENABLED: "false" };

/** What the Lambda service itself puts in a Node.js sandbox's environment, plus the local edge. */
function lambdaRuntimeEnvironment(fn: { name: string; codeDir: string; handler: string; memoryMb: number; region: string; accessKeyId: string; edge: string; runtime: string }): Record<string, string> {
  return {
    AWS_REGION: fn.region,
    AWS_DEFAULT_REGION: fn.region,
    AWS_LAMBDA_FUNCTION_NAME: fn.name,
    AWS_LAMBDA_FUNCTION_VERSION: "$LATEST",
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(fn.memoryMb),
    AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${fn.name}`,
    AWS_LAMBDA_LOG_STREAM_NAME: "local/[$LATEST]sandbox",
    AWS_EXECUTION_ENV: `AWS_Lambda_${fn.runtime}`,
    AWS_ACCESS_KEY_ID: fn.accessKeyId,
    AWS_SECRET_ACCESS_KEY: LOCAL_SECRET_KEY,
    AWS_SESSION_TOKEN: `local-session-${fn.name}`,
    LAMBDA_TASK_ROOT: fn.codeDir,
    LAMBDA_RUNTIME_DIR: fn.codeDir,
    _HANDLER: fn.handler,
    TZ: ":UTC",
    LANG: "en_US.UTF-8",
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    // Local only: every SDK call goes to the edge (in AWS the regional endpoints are the default).
    AWS_ENDPOINT_URL: fn.edge,
    // The bundles target nodejs22.x; locally they run on this Node, whose SDK warning is noise.
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
  };
}

const EXECUTE_API_URL = /^https:\/\/([a-z0-9]+)\.execute-api\.[a-z0-9-]+\.amazonaws\.com\/(.*)$/;

/** A deployed API's regional URL -> its loopback equivalent behind the edge. */
export function localizeUrls(values: Record<string, string>, edge: string): Record<string, string> {
  return Object.fromEntries(Object.entries(values).map(([key, value]) => [key, localizeUrl(String(value), edge)]));
}

export function localizeUrl(value: string, edge: string): string {
  const match = EXECUTE_API_URL.exec(value);
  return match ? `${edge}/@execute-api/${match[1]}/${match[2]}` : value;
}
