import { randomBytes } from "node:crypto";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { SQSClient } from "@aws-sdk/client-sqs";
import type { Context } from "aws-lambda";
import { createAttemptHandler } from "../../functions/attempt/app";
import { createDecideHandler } from "../../functions/decide/app";
import { createDispatcherHandler } from "../../functions/dispatcher/app";
import { createRestHandler } from "../../functions/rest-api/app";
import { createRunFinalizeHandler } from "../../functions/run-finalize/app";
import { createRunStartHandler } from "../../functions/run-start/app";
import { createSweeperHandler } from "../../functions/sweeper/app";
import { SWEEP_INTERVAL_MS } from "../../shared/lanes/sweep";
import { startLocalSweeper, type LocalSweeper } from "./sweeper";
import { createWebSocketHandler } from "../../functions/ws-api/app";
import { loadAgentConfig, type AgentConfig } from "../../shared/config/config";
import type { RuntimeConfig } from "../../shared/config/runtime";
import { sha256Hex } from "../../shared/core/ids";
import { buildAppDeps, type AppDeps } from "../../shared/runtime/app-deps";
import { silentLog, type Log } from "../../shared/run/deps";
import { FUNCTION_SPECS, type FunctionKey } from "../functions";
import { WS_METHOD_ROUTES, WS_STAGE_NAME } from "../routes";
import { renderStateMachineDefinition, synthesizeTemplate } from "../synth";
import { startLocalApiGateway, type LocalApiGateway } from "./api-gateway";
import { ensureTable, startLocalDynamo, type LocalDynamo } from "./dynamo";
import { createLambdaContext } from "./lambda-context";
import { createFifoQueueWithDlq, startLocalSqs, type LocalSqs } from "./sqs";
import { startSqsEventSource, type SqsEventSource } from "./sqs-event-source";
import { startLocalStepFunctions, type LocalExecutionEvent, type LocalStepFunctions } from "./step-functions";
import type { SdkMeter } from "../../shared/aws/metering";

export const LOCAL_REGION = "us-east-1";
export const LOCAL_ACCOUNT = "000000000000";
const LOCAL_CREDENTIALS = { accessKeyId: "local", secretAccessKey: "local" };

export interface LocalStackOptions {
  /** Front door port (REST + WebSocket); 0 picks a free one. */
  port?: number;
  host?: string;
  /** Persist DynamoDB here; in memory when absent. */
  dataDir?: string;
  config?: AgentConfig;
  /** Bearer token clients present; generated when absent. */
  authToken?: string;
  log?: Log;
  tableName?: string;
  /** Benchmarks: observe what the stack does (never needed to run it). */
  observe?: LocalStackObserver;
  /** The sweeper's schedule (EventBridge: every minute); 0 = no timer. Failed executions reach it regardless. */
  sweepIntervalMs?: number;
  /**
   * Tests: Wait states last this many ms instead of their seconds (state name -> ms), e.g.
   * `{ WaitBeforeRetry: 0 }`. The decision still says how long AWS would wait.
   */
  waitStateMs?: Record<string, number>;
}

/** Hooks the benchmark uses to count what a run costs; all optional, all off by default. */
export interface LocalStackObserver {
  /** Attached to every SDK client the handlers and the SQS poller use. */
  meter?: SdkMeter;
  /** Every state entered, retried, ... by the local Step Functions. */
  onExecutionEvent?: (event: LocalExecutionEvent) => void;
  /** Wraps each function invocation (API Gateway, SQS poller and Step Functions tasks alike). */
  aroundInvoke?: <R>(key: FunctionKey, invoke: () => Promise<R>) => Promise<R>;
}

export interface LocalStack {
  restUrl: string;
  webSocketUrl: string;
  authToken: string;
  config: AgentConfig;
  deps: AppDeps;
  /** Resolves when no message is queued or dispatching and no execution runs. */
  idle(): Promise<void>;
  /** Runs one scheduled sweep now (what the every-minute timer does). */
  sweepNow(): Promise<unknown>;
  close(): Promise<void>;
}

/**
 * The whole system on loopback, in this process: dynalite (DynamoDB), fauxqs
 * (SQS) with our event-source poller, aws-local-stepfunctions running the ASL
 * the CDK app synthesizes, and our API Gateway front door — all reached
 * through the real AWS SDK clients, by the same handler code Lambda runs.
 */
export async function startLocalStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  const log = options.log ?? silentLog;
  const config = options.config ?? loadAgentConfig();
  const authToken = options.authToken ?? randomBytes(18).toString("base64url");
  const parts = await startEmulators(options);
  const handlers = new HandlerSlots(options.observe?.aroundInvoke);
  try {
    const gateway = await startFrontDoor(options, handlers);
    parts.closers.unshift(() => gateway.close());
    const stateMachineArn = registerStateMachine(parts.sfn, handlers, options.waitStateMs);
    const runtime: RuntimeConfig = {
      region: LOCAL_REGION,
      tableName: options.tableName ?? "agent-runner",
      queueUrl: parts.queue.queueUrl,
      stateMachineArn,
      webSocketManagementEndpoint: gateway.managementEndpoint,
      authTokenSha256: sha256Hex(authToken),
      endpoints: { dynamodb: parts.dynamo.endpoint, sqs: parts.sqs.endpoint, sfn: parts.sfn.endpoint },
      credentials: LOCAL_CREDENTIALS,
      ...(options.observe?.meter ? { meter: options.observe.meter } : {}),
    };
    await ensureTable(new DynamoDBClient({ region: LOCAL_REGION, endpoint: parts.dynamo.endpoint, credentials: LOCAL_CREDENTIALS }), runtime.tableName);
    const deps = buildAppDeps(runtime, config, log);
    handlers.bind(deps);
    const eventSource = startDispatcherSource(parts, handlers);
    parts.closers.unshift(() => eventSource.stop());
    const sweeper = startSweeper(options, handlers, log);
    parts.executionListeners.push(sweeper.onExecutionEvent);
    parts.closers.unshift(() => sweeper.stop());
    return {
      restUrl: gateway.restUrl,
      webSocketUrl: gateway.webSocketUrl,
      authToken,
      config,
      deps,
      idle: async () => {
        await eventSource.idle();
        await sweeper.idle();
        await parts.sfn.waitForIdle();
      },
      sweepNow: () => sweeper.sweepNow(),
      close: () => closeAll(parts.closers),
    };
  } catch (error) {
    await closeAll(parts.closers);
    throw error;
  }
}

interface Emulators {
  dynamo: LocalDynamo;
  sqs: LocalSqs;
  sfn: LocalStepFunctions;
  queue: { queueUrl: string; queueArn: string };
  sqsClient: SQSClient;
  closers: (() => Promise<void>)[];
  /** Told about every local execution event (the sweeper listens for closed executions). */
  executionListeners: ((event: LocalExecutionEvent) => void)[];
}

async function startEmulators(options: LocalStackOptions): Promise<Emulators> {
  const closers: (() => Promise<void>)[] = [];
  const executionListeners: ((event: LocalExecutionEvent) => void)[] = [];
  try {
    const dynamo = await startLocalDynamo({ dataDir: options.dataDir });
    closers.unshift(() => dynamo.close());
    const sqs = await startLocalSqs({ port: 0 });
    closers.unshift(() => sqs.stop());
    const sqsClient = new SQSClient({ region: LOCAL_REGION, endpoint: sqs.endpoint, credentials: LOCAL_CREDENTIALS });
    options.observe?.meter?.attach(sqsClient, "sqs");
    const queue = await createFifoQueueWithDlq(sqsClient, {
      name: "agent-runs",
      // AWS guidance: at least 6x the consumer's timeout.
      visibilityTimeoutSeconds: FUNCTION_SPECS.dispatcher.timeoutSeconds * 6,
      maxReceiveCount: 5,
    });
    const sfn = await startLocalStepFunctions({
      port: 0,
      region: LOCAL_REGION,
      accountId: LOCAL_ACCOUNT,
      onExecutionEvent: (event) => {
        options.observe?.onExecutionEvent?.(event);
        for (const listener of executionListeners) listener(event);
      },
    });
    closers.unshift(() => sfn.close());
    return { dynamo, sqs, sfn, queue, sqsClient, closers, executionListeners };
  } catch (error) {
    await closeAll(closers);
    throw error;
  }
}

type AnyHandler = (event: never, context: Context) => Promise<unknown>;

/**
 * The emulators need handlers before the handlers' dependencies exist (ports
 * are only known once everything listens), so handlers are bound late.
 */
class HandlerSlots {
  private bound: Partial<Record<FunctionKey, AnyHandler>> = {};

  constructor(private readonly around?: LocalStackObserver["aroundInvoke"]) {}

  bind(deps: AppDeps): void {
    this.bound = {
      "rest-api": createRestHandler(deps),
      "ws-api": createWebSocketHandler(deps),
      dispatcher: createDispatcherHandler(deps),
      "run-start": createRunStartHandler(deps),
      attempt: createAttemptHandler(deps),
      decide: createDecideHandler(deps),
      "run-finalize": createRunFinalizeHandler(deps),
      sweeper: createSweeperHandler(deps),
    } as Partial<Record<FunctionKey, AnyHandler>>;
  }

  invoke<R>(key: FunctionKey, event: unknown, context: Context): Promise<R> {
    const handler = this.bound[key];
    if (!handler) throw new Error(`local stack: function ${key} is not bound yet`);
    const invoke = () => handler(event as never, context) as Promise<R>;
    return this.around ? this.around(key, invoke) : invoke();
  }
}

async function startFrontDoor(options: LocalStackOptions, handlers: HandlerSlots): Promise<LocalApiGateway> {
  return startLocalApiGateway({
    host: options.host,
    port: options.port ?? 0,
    stage: WS_STAGE_NAME,
    restHandler: (event, context) => handlers.invoke("rest-api", event, context),
    webSocketHandler: (event, context) => handlers.invoke("ws-api", event, context),
    webSocketRoutes: [...WS_METHOD_ROUTES],
    createContext: (functionName) => createLambdaContext(functionName, timeoutOf(functionName as FunctionKey)),
    webSocketAsyncInvocation: { functionTimeoutMs: timeoutOf("ws-api") },
  });
}

function timeoutOf(key: FunctionKey): number {
  return (FUNCTION_SPECS[key]?.timeoutSeconds ?? 30) * 1000;
}

/** The state machine CDK synthesizes, rendered with placeholder ARNs, each Task bound in-process. */
function registerStateMachine(sfn: LocalStepFunctions, handlers: HandlerSlots, waitStateMs?: Record<string, number>): string {
  const template = synthesizeTemplate({ bundling: false });
  const rendered = renderStateMachineDefinition(template, { region: LOCAL_REGION, accountId: LOCAL_ACCOUNT });
  const taskHandlers: Record<string, (input: unknown, context: Context) => Promise<unknown>> = {};
  const taskTimeoutsMs: Record<string, number> = {};
  for (const [arn, key] of Object.entries(rendered.taskFunctions)) {
    taskHandlers[arn] = (input, context) => handlers.invoke(key as FunctionKey, input, context);
    taskTimeoutsMs[arn] = timeoutOf(key as FunctionKey);
  }
  return sfn.register({ name: "agent-runner-runs", definition: rendered.definition, taskHandlers, taskTimeoutsMs, waitStateMs });
}

function startDispatcherSource(parts: Emulators, handlers: HandlerSlots): SqsEventSource {
  return startSqsEventSource({
    sqsClient: parts.sqsClient,
    queueUrl: parts.queue.queueUrl,
    queueArn: parts.queue.queueArn,
    region: LOCAL_REGION,
    handler: (event, context) => handlers.invoke("dispatcher", event, context),
    functionName: "dispatcher",
    functionTimeoutMs: timeoutOf("dispatcher"),
    batchSize: 10,
    waitTimeSeconds: 1,
    concurrency: 2,
  });
}

/** EventBridge's two sweeper rules, locally: a timer and the executions that end FAILED / TIMED_OUT / ABORTED. */
function startSweeper(options: LocalStackOptions, handlers: HandlerSlots, log: Log): LocalSweeper {
  return startLocalSweeper({
    invoke: (event) => handlers.invoke("sweeper", event, createLambdaContext("sweeper", timeoutOf("sweeper"))),
    intervalMs: options.sweepIntervalMs ?? SWEEP_INTERVAL_MS,
    region: LOCAL_REGION,
    accountId: LOCAL_ACCOUNT,
    onError: (error) => log.error("local sweeper invocation failed", { error: String(error) }),
  });
}

async function closeAll(closers: (() => Promise<void>)[]): Promise<void> {
  for (const close of closers) {
    await close().catch(() => undefined);
  }
}
