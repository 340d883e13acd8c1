/**
 * The whole system on loopback: the CDK app is synthesized (or an existing
 * cloud assembly is read) and its template is deployed onto local emulators
 * — dynalite (DynamoDB), fauxqs (SQS) with our event-source poller,
 * aws-local-stepfunctions, our Secrets Manager and Lambda APIs, our API
 * Gateway front door — every function in its own worker-thread sandboxes
 * running the asset CDK staged, every SDK call through the IAM-enforcing
 * edge. The tested system is the deployed system.
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { SendMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import type { AgentConfig } from "../../shared/config/config";
import { putApiKey } from "../../shared/aws/api-keys";
import { buildAppDeps, type AppDeps } from "../../shared/runtime/app-deps";
import type { RuntimeConfig } from "../../shared/config/runtime";
import { silentLog, type Log } from "../../shared/run/deps";
import { withCapacityRequestBody } from "../../shared/aws/metering";
import type { FunctionKey } from "../functions";
import { functionKeysByLogicalId } from "../function-keys";
import { prepareAssembly } from "./prepare-assembly";
import { startAwsEdge, type AwsEdge, type AwsEdgeOptions, type EdgeCall } from "./aws-edge";
import { loadAssembly, type LoadedAssembly } from "./deploy/assembly";
import { deployResources, type DeployedFunction, type DeployedResources } from "./deploy/deploy";
import { wireTriggers, type Wiring } from "./deploy/wiring";
import type { AroundInvoke } from "./deploy/rest-routes";
import { createLambdaApi } from "./deploy/lambda-api";
import { startLocalDynamo } from "./dynamo";
import { createLocalSecretsManager, type LocalSecretsManager } from "./secrets-manager";
import { startLocalSqs } from "./sqs";
import { startLocalStepFunctions, type LocalExecutionEvent } from "./step-functions";
import { recoverAfterRestart, type Recovery } from "./recovery";
import { edgeFaults, invokeFaults, type FaultPlan } from "./faults-wiring";

export const LOCAL_REGION = "us-east-1";
export const LOCAL_ACCOUNT = "000000000000";
/** Local tooling's identity on the edge (tests, the CLI, the deployer): every call allowed. */
export const ADMIN_CREDENTIALS = { accessKeyId: "local", secretAccessKey: "local" };

export interface LocalStackOptions {
  /** Front door port (REST + WebSocket); 0 picks a free one. */
  port?: number;
  /** The AWS edge's port (every service's endpoint); 0 (default) picks a free one. */
  edgePort?: number;
  host?: string;
  /** Persist DynamoDB and secrets here; in memory when absent. */
  dataDir?: string;
  /** The agent configuration (an object as in the JSON file); else the config file of `env`. */
  config?: AgentConfig | Record<string, unknown>;
  /** A config file to synthesize with. */
  configFile?: string;
  /** Deploy this cloud assembly (a `cdk synth` output) instead of synthesizing. */
  assemblyDir?: string;
  /** The environment synthesis and the local secret fill read (default process.env). */
  env?: Record<string, string | undefined>;
  /** Bearer token clients present (stored as the local tenant's admin key); generated when absent. */
  authToken?: string;
  log?: Log;
  /** Synthesize in a child process while the emulators start (npm start: nothing of aws-cdk-lib stays resident afterwards). */
  synthInChild?: boolean;
  /** Where function log lines go (default: dropped; FUNCTION_LOGS=1 prints them). */
  functionLogs?: (functionName: string, line: string) => void;
  /** Benchmarks: observe what the stack does (never needed to run it). */
  observe?: LocalStackObserver;
  /** The sweeper's schedule override (the template says every minute); 0 = no timer. */
  sweepIntervalMs?: number;
  /** Tests: Wait states last this many ms instead of their seconds (state name -> ms). */
  waitStateMs?: Record<string, number>;
  /** Sandboxes per function (default 16). */
  maxConcurrency?: number;
  /** Delay between asynchronous-invocation retries (AWS: ~1 and 2 minutes; default 1 s). */
  asyncRetryDelayMs?: number;
  /** Tests: the fault-injection layer (infra/local/faults.ts); off when absent. */
  faults?: FaultPlan;
  /** Benchmarks: what a region would add to each function's AWS call (aws-edge.ts `callLatencyMs`); off when absent. */
  callLatencyMs?: AwsEdgeOptions["callLatencyMs"];
}

/** Hooks the benchmark uses to count what a run costs; all optional, all off by default. */
export interface LocalStackObserver {
  /** Ask DynamoDB for ConsumedCapacity on every call (benchmarks price write and read units). */
  meterCapacity?: boolean;
  /** Every SDK call the functions make, as the edge saw it (benchmarks count them). */
  onEdgeCall?: (call: EdgeCall) => void;
  onExecutionEvent?: (event: LocalExecutionEvent) => void;
  /** Wraps each function invocation made by a trigger (API Gateway, SQS poller, Step Functions tasks, rules). */
  aroundInvoke?: <R>(key: FunctionKey, invoke: () => Promise<R>) => Promise<R>;
}

export interface LocalStack {
  restUrl: string;
  webSocketUrl: string;
  authToken: string;
  /** Loopback endpoints of the emulators (the edge serves every service). */
  endpoints: { edge: string; dynamodb: string; sqs: string; stepFunctions: string };
  /** Test-side inspection: admin clients on the deployed table, the run queue, the state machine. */
  deps: AppDeps;
  config: AgentConfig;
  assembly: LoadedAssembly;
  deployed: DeployedResources;
  /** Function key (from the template's tag) -> the deployed function. */
  functions: Record<string, DeployedFunction>;
  /** Stack outputs with local URLs. */
  outputs: Record<string, string>;
  /** Resolves once nothing runs or waits: no trigger busy, no execution running, no asynchronous Invoke queued or retrying. */
  idle(): Promise<void>;
  sweepNow(): Promise<unknown>;
  close(): Promise<void>;
  /** With a data folder: what the start recovered (infra/local/recovery.ts). */
  recovery?: Recovery;
}

export async function startLocalStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  const closers: (() => Promise<void>)[] = [];
  const log = options.log ?? silentLog;
  try {
    const synthesizing = options.assemblyDir ? undefined : prepareAssembly(options);
    // Rejections surface at the await below; until then the emulators start.
    synthesizing?.catch(() => undefined);
    const emulators = await startEmulators(options, closers);
    const synthesized = await synthesizing;
    if (synthesized && !synthesized.cached) closers.unshift(async () => rmSync(synthesized.dir, { recursive: true, force: true }));
    const assembly = loadAssembly(options.assemblyDir ?? synthesized!.dir);
    const deployed = await deployResources(assembly, {
      region: LOCAL_REGION,
      accountId: LOCAL_ACCOUNT,
      // Queue URLs point at the edge, like every other call a function makes.
      sqsEndpoint: emulators.edge.endpoint,
      edgeEndpoint: emulators.edge.endpoint,
      dynamo: emulators.dynamo,
      sqs: emulators.sqs,
      createSecret: (name, value) => fillSecret(emulators.secrets, name, value, secretFill(options, synthesized?.secretValues)),
      // FUNCTION_LOGS=1 shows every function's log lines (tests and tools that start the stack in-process).
      logSink: options.functionLogs ?? (process.env.FUNCTION_LOGS ? (fn, line) => console.error(`[${fn}] ${line}`) : () => undefined),
      maxConcurrency: options.maxConcurrency ?? 16,
    });
    closers.unshift(async () => {
      await Promise.all([...deployed.functions.values()].map((fn) => fn.pool.close()));
    });
    const keyOf = functionKeysByLogicalId(assembly.template);
    emulators.bindDeployment(deployed, keyOf);
    const wiring: Wiring = await wireTriggers(assembly, deployed, {
      host: options.host,
      port: options.port ?? 0,
      edge: emulators.edge,
      sfn: emulators.sfn,
      region: LOCAL_REGION,
      accountId: LOCAL_ACCOUNT,
      sweepIntervalMs: options.sweepIntervalMs,
      waitStateMs: options.waitStateMs,
      around: aroundInvocations(options, keyOf),
      log,
      executionListeners: emulators.executionListeners,
      asyncRetryDelayMs: options.asyncRetryDelayMs ?? 1000,
      onAsyncFailure: emulators.onAsyncFailure,
    });
    closers.unshift(() => wiring.close());
    // The edge forwards `/{stage}/@connections/...` paths: the front door's origin, not its stage URL.
    emulators.setManagementTarget(new URL(wiring.managementEndpoint).origin);
    const tableName = deployed.tables[0];
    const authToken = options.authToken ?? `dev_${randomBytes(18).toString("base64url")}`;
    const deps = inspectionDeps(emulators, wiring, tableName, log);
    await putApiKey(deps.db, authToken, { tenantId: "local", name: "dev token", scopes: ["operator.admin"] });
    const functions = Object.fromEntries([...deployed.functions.values()].map((fn) => [keyOf[fn.logicalId] ?? fn.logicalId, fn]));
    const recovery = options.dataDir ? recoverAfterRestart(emulators.sfn, wiring, log) : undefined;
    return {
      ...(recovery ? { recovery } : {}),
      restUrl: wiring.restUrl,
      webSocketUrl: wiring.webSocketUrl,
      authToken,
      endpoints: { edge: emulators.edge.endpoint, dynamodb: emulators.dynamoEndpoint, sqs: emulators.sqsEndpoint, stepFunctions: emulators.sfn.endpoint },
      deps,
      config: deps.config,
      assembly,
      deployed,
      functions,
      outputs: wiring.outputs,
      idle: async () => {
        // Until the triggers are idle and no event waits in the Lambda Invoke API's async queue (a retry's delay included).
        do {
          await wiring.idle();
        } while (await emulators.settleAsyncInvocations());
      },
      sweepNow: () => wiring.sweepNow(),
      close: () => closeAll(closers),
    };
  } catch (error) {
    await closeAll(closers);
    throw error;
  }
}

/** Keys never enter the template: a local deploy fills the local secret from the environment and the config's own keys. */
function secretFill(options: LocalStackOptions, fromConfig: Record<string, string> | undefined): Record<string, string> {
  const env = options.env ?? process.env;
  const fill: Record<string, string> = { ...(fromConfig ?? {}) };
  if (env.OPENAI_API_KEY) fill.OPENAI_API_KEY = env.OPENAI_API_KEY;
  if (env.ANTHROPIC_API_KEY) fill.ANTHROPIC_API_KEY = env.ANTHROPIC_API_KEY;
  return fill;
}

/** Creates the secret with the template's placeholders, keeps values filled earlier, sets the ones this start provides. */
async function fillSecret(secrets: LocalSecretsManager, name: string, templateValue: string, fill: Record<string, string>): Promise<string> {
  const existingArn = secrets.arnForId(name);
  const current = existingArn ? await readSecret(secrets, existingArn) : {};
  const placeholders = safeJson(templateValue);
  const merged: Record<string, unknown> = { ...placeholders };
  for (const key of Object.keys(placeholders)) {
    if (typeof current[key] === "string" && current[key] !== "") merged[key] = current[key];
    if (fill[key]) merged[key] = fill[key];
  }
  return secrets.put(existingArn ?? name, JSON.stringify(merged));
}

async function readSecret(secrets: LocalSecretsManager, arn: string): Promise<Record<string, unknown>> {
  const out = await secrets.handler({ method: "POST", path: "/", headers: { "x-amz-target": "secretsmanager.GetSecretValue" }, body: Buffer.from(JSON.stringify({ SecretId: arn })) });
  if (out.statusCode !== 200) return {};
  return safeJson(String((safeJson(out.body.toString()) as { SecretString?: string }).SecretString ?? "{}"));
}

function safeJson(text: string): Record<string, unknown> {
  try {
    const value = JSON.parse(text) as unknown;
    return value && typeof value === "object" ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

interface Emulators {
  edge: AwsEdge;
  dynamo: DynamoDBClient;
  dynamoEndpoint: string;
  sqs: SQSClient;
  sqsEndpoint: string;
  sfn: Awaited<ReturnType<typeof startLocalStepFunctions>>;
  secrets: LocalSecretsManager;
  executionListeners: ((event: LocalExecutionEvent) => void)[];
  onAsyncFailure(fn: DeployedFunction, payload: string, error: unknown, attempts: number): void;
  /** Waits for the Lambda Invoke API's asynchronous events (running, or waiting for a retry); false when there were none. */
  settleAsyncInvocations(): Promise<boolean>;
  bindDeployment(deployed: DeployedResources, keyOf: Record<string, string>): void;
  setManagementTarget(url: string): void;
}

async function startEmulators(options: LocalStackOptions, closers: (() => Promise<void>)[]): Promise<Emulators> {
  const dynamoServer = await startLocalDynamo({ dataDir: options.dataDir ? join(options.dataDir, "dynamodb") : undefined });
  closers.unshift(() => dynamoServer.close());
  const sqsServer = await startLocalSqs({ port: 0 });
  closers.unshift(() => sqsServer.stop());
  const executionListeners: ((event: LocalExecutionEvent) => void)[] = [];
  const sfn = await startLocalStepFunctions({
    port: 0,
    region: LOCAL_REGION,
    accountId: LOCAL_ACCOUNT,
    onExecutionEvent: (event) => {
      options.observe?.onExecutionEvent?.(event);
      for (const listener of executionListeners) listener(event);
    },
    // With a data folder, running executions survive a restart (kill -9 included).
    ...(options.dataDir ? { journalDir: join(options.dataDir, "stepfunctions") } : {}),
    ...(options.faults ? { taskFault: (task: { name: string; state: string }) => options.faults!.executionFault(task) } : {}),
  });
  closers.unshift(() => sfn.close());
  const secrets = createLocalSecretsManager({ region: LOCAL_REGION, accountId: LOCAL_ACCOUNT, ...(options.dataDir ? { persistFile: join(options.dataDir, "secrets.json") } : {}) });
  let deployed: DeployedResources | undefined;
  let keyOf: Record<string, string> = {};
  let around: AroundInvoke | undefined;
  const asyncWork = new Set<Promise<unknown>>();
  const lambdaApi = createLambdaApi({
    lookup: (name) => deployed?.byName.get(name),
    retryDelayMs: options.asyncRetryDelayMs ?? 1000,
    invoke: (fn, payload) => (around ? around(fn, () => fn.pool.invokeJson(payload), payload) : fn.pool.invokeJson(payload)),
    track: (work) => {
      asyncWork.add(work);
      void work.finally(() => asyncWork.delete(work));
    },
    onAsyncFailure: (fn, payload, error, attempts) => onAsyncFailure(fn, payload, error, attempts),
  });
  const onAsyncFailure = (fn: DeployedFunction, payload: string, error: unknown, attempts: number): void => {
    options.log?.warn("asynchronous invocation failed after its retries", { function: fn.name, error: String(error) });
    const queueUrl = fn.asyncFailureDestination ? deployed?.queueUrlForArn(fn.asyncFailureDestination) : undefined;
    if (queueUrl) void sendAsyncFailure(sqsAdmin, queueUrl, fn.arn, payload, error, attempts).catch(() => undefined);
  };
  const executeApi = { target: "" };
  // Lambda's own delivery to a function's OnFailure destination (not a call the function makes).
  const sqsAdmin = new SQSClient({ region: LOCAL_REGION, credentials: ADMIN_CREDENTIALS, endpoint: sqsServer.endpoint });
  const edge = await startAwsEdge({
    host: options.host,
    port: options.edgePort ?? 0,
    region: LOCAL_REGION,
    accountId: LOCAL_ACCOUNT,
    identities: new Map([[ADMIN_CREDENTIALS.accessKeyId, { admin: true, principalArn: `arn:aws:iam::${LOCAL_ACCOUNT}:root` }]]),
    upstreams: {
      dynamodb: dynamoServer.handler,
      sqs: sqsServer.endpoint,
      states: sfn.endpoint,
      secretsmanager: secrets.handler,
      lambda: lambdaApi,
      "execute-api": (request) => forwardTo(executeApi.target, request),
    },
    queueArnForUrl: (url) => deployed?.queueArnForUrl(url),
    secretArnForId: (id) => secrets.arnForId(id),
    ...(options.observe?.onEdgeCall ? { onCall: options.observe.onEdgeCall } : {}),
    ...(options.observe?.meterCapacity ? { rewriteRequestBody: withCapacityRequestBody } : {}),
    ...(options.callLatencyMs ? { callLatencyMs: options.callLatencyMs } : {}),
    ...(options.faults ? { faultFor: edgeFaults(options.faults, (name) => deployed?.byName.get(name), (fn) => keyOf[fn.logicalId], (name, fault) => sfn.failExecution(name, fault)) } : {}),
  });
  closers.unshift(() => edge.close());
  const admin = { region: LOCAL_REGION, credentials: ADMIN_CREDENTIALS };
  return {
    edge,
    dynamo: new DynamoDBClient({ ...admin, endpoint: dynamoServer.endpoint }),
    dynamoEndpoint: dynamoServer.endpoint,
    // Through the edge, so queue URLs carry the edge's address (what functions are given).
    sqs: new SQSClient({ ...admin, endpoint: edge.endpoint }),
    sqsEndpoint: sqsServer.endpoint,
    sfn,
    secrets,
    executionListeners,
    onAsyncFailure,
    settleAsyncInvocations: async () => {
      if (asyncWork.size === 0) return false;
      await Promise.allSettled([...asyncWork]);
      return true;
    },
    bindDeployment: (d, keys) => {
      deployed = d;
      keyOf = keys;
      around = aroundInvocations(options, keys);
      for (const fn of d.functions.values()) {
        edge.setIdentity(fn.accessKeyId, { principalArn: `arn:aws:sts::${LOCAL_ACCOUNT}:assumed-role/${fn.roleName}/${fn.name}`, statements: fn.statements });
      }
    },
    setManagementTarget: (url) => {
      executeApi.target = url;
    },
  };
}

/**
 * What every invocation goes through, whether a trigger makes it (API
 * Gateway, the SQS poller, Step Functions, rules) or a function does through
 * the Lambda Invoke API (ws-api's post-connect step): the fault plan's invoke
 * faults first (a refused invocation never reaches the observer, as Lambda
 * never runs it), then the benchmarks' observer.
 */
function aroundInvocations(options: LocalStackOptions, keyOf: Record<string, string>): AroundInvoke | undefined {
  const observe = options.observe?.aroundInvoke;
  return invokeFaults(options.faults, keyOf, observe ? (fn, invoke) => observe(keyOf[fn.logicalId] as FunctionKey, invoke) : undefined);
}

/** Lambda's failure record for an asynchronous invocation whose retries ran out (the OnFailure destination's message). */
async function sendAsyncFailure(sqs: SQSClient, queueUrl: string, functionArn: string, payload: string, error: unknown, attempts: number): Promise<void> {
  const record = {
    version: "1.0",
    timestamp: new Date().toISOString(),
    requestContext: { requestId: randomBytes(16).toString("hex"), functionArn: `${functionArn}:$LATEST`, condition: "RetriesExhausted", approximateInvokeCount: attempts },
    requestPayload: safeJson(payload),
    responseContext: { statusCode: 200, executedVersion: "$LATEST", functionError: "Unhandled" },
    responsePayload: (error as { payload?: unknown }).payload ?? { errorMessage: String(error) },
  };
  await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(record) }));
}

/** The execute-api upstream: the front door's management endpoint, known once it listens. */
async function forwardTo(base: string, request: { method: string; path: string; headers: Record<string, string>; body: Buffer }) {
  const response = await fetch(`${base}${request.path}`, { method: request.method, headers: { "content-type": request.headers["content-type"] ?? "application/json" }, body: request.method === "GET" || request.method === "DELETE" ? undefined : request.body });
  const headers: Record<string, string> = {};
  response.headers.forEach((value, key) => (headers[key] = value));
  return { statusCode: response.status, headers, body: Buffer.from(await response.arrayBuffer()) };
}

/** What tests read and write the deployed resources with: admin clients, never a function's. */
function inspectionDeps(emulators: Emulators, wiring: Wiring, tableName: string, log: Log): AppDeps {
  const runtime: RuntimeConfig = {
    region: LOCAL_REGION,
    tableName,
    queueUrl: wiring.runQueueUrl,
    stateMachineArn: wiring.stateMachineArn,
    loopStateMachineArn: wiring.loopStateMachineArn,
    webSocketManagementEndpoint: wiring.managementEndpoint,
    endpoints: { dynamodb: emulators.dynamoEndpoint, sqs: emulators.sqsEndpoint, sfn: emulators.sfn.endpoint },
    credentials: ADMIN_CREDENTIALS,
  };
  return buildAppDeps(runtime, wiring.config, log);
}

async function closeAll(closers: (() => Promise<void>)[]): Promise<void> {
  for (const close of closers) await close().catch(() => undefined);
}
