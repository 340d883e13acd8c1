/**
 * AgentRunner: the whole runner as one construct, to put into any CDK app
 * (this repo's app is one instance of it, infra/stack.ts). Storage and
 * messaging are built here; functions, APIs, the state machine and alarms
 * come from their own modules so each piece stays small and testable.
 */
import { join } from "node:path";
import { Duration, RemovalPolicy, SecretValue, Stack } from "aws-cdk-lib";
import type { ITopic } from "aws-cdk-lib/aws-sns";
import { AttributeType, BillingMode, Table } from "aws-cdk-lib/aws-dynamodb";
import type { IFunction } from "aws-cdk-lib/aws-lambda";
import { LogGroup, RetentionDays } from "aws-cdk-lib/aws-logs";
import { Secret } from "aws-cdk-lib/aws-secretsmanager";
import type { LogLevel } from "aws-cdk-lib/aws-stepfunctions";
import { Queue, QueueEncryption } from "aws-cdk-lib/aws-sqs";
import { Construct } from "constructs";
import { createAlarms } from "./alarms";
import { configureAsyncInvocations } from "./async-invocations";
import { resolveAgentConfig, type AgentConfigSource, type ResolvedAgentConfig } from "./agent-config";
import { addWebSocketRoutes, createRestApi, createWebSocketApi } from "./apis";
import { addOpenAIRoutes } from "./openai-routes";
import { stageFunctionAsset } from "./assets";
import { bundleFunctions } from "./bundle";
import { FUNCTION_KEYS, FUNCTION_SPECS, type FunctionKey } from "./functions";
import { createFunction, REPO_ROOT, stateMachineArnOf, type FunctionDeps, type FunctionSettings } from "./lambdas";
import { createRunStateMachines } from "./state-machine";
import { ConsoleSite } from "./console-site";
import { createObservability } from "./observability";
import { acknowledgeNagFindings } from "./nag-wiring";

/** Keys and TTL attribute of the single table; items are typed by `pk`/`sk` prefixes. */
export const TABLE_SCHEMA = { partitionKey: "pk", sortKey: "sk", ttlAttribute: "expiresAt" } as const;

export const DLQ_MAX_RECEIVE_COUNT = 5;
/** AWS: the queue's visibility timeout should be at least 6x the consumer's timeout. */
export const VISIBILITY_TIMEOUT_FACTOR = 6;

/** Only the functions that call a model build prompts: they get the workspace folder. */
const WORKSPACE_FUNCTIONS: readonly FunctionKey[] = ["attempt"];

export interface AgentRunnerProps extends AgentConfigSource {
  /** Hex SHA-256 of the API bearer token (never the token itself); empty: only key items in the table authenticate. */
  readonly authTokenSha256?: string;
  /** Every alarm notifies this topic (alarm and OK); default: a topic created here (`alarmTopic` of the construct). */
  readonly alarmTopic?: ITopic;
  /** Step Functions execution logging of the run loop (default ERROR). */
  readonly stateMachineLogLevel?: LogLevel;
  /** Deploy the web console as a static site (S3 + CloudFront, infra/console-site.ts; default off). */
  readonly console?: boolean;
  /** Log retention of every function and of the state machine (default one month). */
  readonly logRetention?: RetentionDays;
  /** X-Ray on the functions and the state machine, Powertools Tracer in the handlers (default on). */
  readonly tracing?: boolean;
  /** Table, secret and logs on stack deletion (default RETAIN). */
  readonly removalPolicy?: RemovalPolicy;
  /** POWERTOOLS_LOG_LEVEL (default INFO). */
  readonly logLevel?: string;
  /** Bundle cache (default node_modules/.cache/agent-runner under the repo). */
  readonly cacheDir?: string;
}

export class AgentRunner extends Construct {
  readonly agentConfig: ResolvedAgentConfig;
  readonly functions: Record<FunctionKey, IFunction>;
  readonly restApiUrl: string;
  readonly webSocketUrl: string;
  readonly providerKeys: Secret;
  /** Channel bot tokens and signing secrets (only when channels are configured; docs/channels.md). */
  readonly channelSecrets?: Secret;
  readonly tableName: string;
  readonly queueUrl: string;
  readonly stateMachineArn: string;
  readonly alarmTopic: ITopic;
  /** The console's URL when the `console` prop is on. */
  readonly consoleUrl?: string;

  constructor(scope: Construct, id: string, props: AgentRunnerProps = {}) {
    super(scope, id);
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;
    const logRetention = props.logRetention ?? RetentionDays.ONE_MONTH;
    this.agentConfig = resolveAgentConfig(props);
    const table = this.createTable(removalPolicy);
    const { queue, deadLetterQueue } = this.createQueues();
    this.providerKeys = this.createProviderKeysSecret(removalPolicy);
    this.channelSecrets = this.createChannelSecret(removalPolicy);
    const ws = createWebSocketApi(this, removalPolicy);
    // Fixed names let functions know the ARNs without a Ref (see lambdas.ts). The run machine keeps the
    // name the single machine had, so an update replaces its definition, not the machine.
    const stateMachineName = `${Stack.of(this).stackName}-run-loop`;
    const loopStateMachineName = `${Stack.of(this).stackName}-run-continued`;
    const settings: FunctionSettings = {
      removalPolicy,
      logRetention,
      logLevel: (props.logLevel ?? "INFO").toUpperCase(),
      tracing: props.tracing ?? true,
      authTokenSha256: props.authTokenSha256 ?? "",
      providerKeysMaxAgeSeconds: this.agentConfig.config.secrets.maxAgeSeconds,
    };
    const deps: FunctionDeps = {
      settings,
      assets: this.stageAssets(props.cacheDir ?? join(REPO_ROOT, "node_modules", ".cache", "agent-runner")),
      table,
      queue,
      providerKeys: this.providerKeys,
      ...(this.channelSecrets ? { channelSecrets: this.channelSecrets } : {}),
      wsApiId: ws.api.apiId,
      wsStageName: ws.stage.stageName,
      wsManagementEndpoint: ws.stage.callbackUrl,
      stateMachineArn: stateMachineArnOf(this, stateMachineName),
      stateMachineName,
      loopStateMachineArn: stateMachineArnOf(this, loopStateMachineName),
      loopStateMachineName,
    };
    const fns = Object.fromEntries(FUNCTION_KEYS.map((key) => [key, createFunction(this, FUNCTION_SPECS[key], deps)])) as Record<FunctionKey, ReturnType<typeof createFunction>>;
    this.functions = fns;
    addWebSocketRoutes(ws.api, fns["ws-api"], fns.authorizer);
    configureAsyncInvocations(this, fns);
    const restApi = createRestApi(this, { handler: fns["rest-api"], authorizer: fns.authorizer, removalPolicy, tracing: settings.tracing });
    addOpenAIRoutes(restApi, fns["openai-api"], fns["rest-api"]);
    const machineLogs = (name: string, id: string) => new LogGroup(this, id, {
      // The /aws/vendedlogs/ prefix keeps CloudWatch Logs' resource policy small.
      logGroupName: `/aws/vendedlogs/states/${name}`,
      retention: logRetention,
      removalPolicy,
    });
    const machines = createRunStateMachines(this, {
      functions: fns,
      runMachineName: stateMachineName,
      loopMachineName: loopStateMachineName,
      logGroup: machineLogs(stateMachineName, "RunStateMachineLogs"),
      loopLogGroup: machineLogs(loopStateMachineName, "LoopStateMachineLogs"),
      tracing: settings.tracing,
      logLevel: props.stateMachineLogLevel,
    });
    const stateMachine = machines.run;
    // Callers that are not tasks wait for the machine (run-finalize cannot: it is a task).
    for (const key of ["dispatcher", "sweeper", "rest-api", "ws-api", "openai-api"] as const) fns[key].node.addDependency(machines.run, machines.loop);
    const stateMachines = [machines.run, machines.loop];
    const alarms = createAlarms(this, { deadLetterQueue, stateMachines, functions: fns });
    this.alarmTopic = createObservability(this, { alarms, alarmTopic: props.alarmTopic, queue, deadLetterQueue, stateMachines, functions: fns }).alarmTopic;
    if (props.console) this.consoleUrl = new ConsoleSite(this, "Console", { restApi, webSocketUrl: ws.stage.url, removalPolicy }).url;
    acknowledgeNagFindings(this, { wsApi: ws.api, wsStage: ws.stage.stageName, restApi, functions: fns });
    this.restApiUrl = restApi.url;
    this.webSocketUrl = ws.stage.url;
    this.tableName = table.tableName;
    this.queueUrl = queue.queueUrl;
    this.stateMachineArn = stateMachine.stateMachineArn;
  }

  private stageAssets(cacheDir: string): Record<FunctionKey, string> {
    const entries = Object.fromEntries(FUNCTION_KEYS.map((key) => [key, join(REPO_ROOT, FUNCTION_SPECS[key].entry)]));
    const bundles = bundleFunctions({ entries, pluginModules: this.agentConfig.pluginModules, cacheDir: join(cacheDir, "bundles"), projectRoot: REPO_ROOT });
    const staged = FUNCTION_KEYS.map((key) => {
      const workspaceDir = WORKSPACE_FUNCTIONS.includes(key) ? this.agentConfig.workspaceDir : undefined;
      return [key, stageFunctionAsset({ bundleDir: bundles[key], deployed: this.agentConfig.deployed, workspaceDir, stagingRoot: join(cacheDir, "assets") })];
    });
    return Object.fromEntries(staged) as Record<FunctionKey, string>;
  }

  private createTable(removalPolicy: RemovalPolicy): Table {
    return new Table(this, "Table", {
      partitionKey: { name: TABLE_SCHEMA.partitionKey, type: AttributeType.STRING },
      sortKey: { name: TABLE_SCHEMA.sortKey, type: AttributeType.STRING },
      timeToLiveAttribute: TABLE_SCHEMA.ttlAttribute,
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      removalPolicy,
    });
  }

  private createQueues(): { queue: Queue; deadLetterQueue: Queue } {
    const deadLetterQueue = new Queue(this, "RunQueueDlq", {
      fifo: true,
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // Longer than the source queue's retention: FIFO keeps the original enqueue time.
      retentionPeriod: Duration.days(14),
    });
    const queue = new Queue(this, "RunQueue", {
      fifo: true,
      // Dedup id = run id (or the caller's idempotency key), never the body.
      contentBasedDeduplication: false,
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      visibilityTimeout: Duration.seconds(VISIBILITY_TIMEOUT_FACTOR * FUNCTION_SPECS.dispatcher.timeoutSeconds),
      deadLetterQueue: { queue: deadLetterQueue, maxReceiveCount: DLQ_MAX_RECEIVE_COUNT },
    });
    return { queue, deadLetterQueue };
  }

  /**
   * Provider API keys live in Secrets Manager, filled in by the operator
   * after deploy; the template only carries empty placeholders, one per
   * provider key and per configured auth profile.
   */
  private createProviderKeysSecret(removalPolicy: RemovalPolicy): Secret {
    const placeholders = Object.fromEntries(this.agentConfig.deployed.secretKeys.map((name) => [name, SecretValue.unsafePlainText("")]));
    const secret = new Secret(this, "ProviderKeys", {
      description: `agent-runner provider API keys: fill in ${this.agentConfig.deployed.secretKeys.join(", ")}`,
      secretObjectValue: placeholders,
    });
    secret.applyRemovalPolicy(removalPolicy);
    return secret;
  }

  /** Separate from the provider keys: the webhook and delivery functions read these, never the model keys. */
  private createChannelSecret(removalPolicy: RemovalPolicy): Secret | undefined {
    const names = this.agentConfig.deployed.channelSecretKeys ?? [];
    if (names.length === 0) return undefined;
    const secret = new Secret(this, "ChannelSecrets", {
      description: `agent-runner channel secrets: fill in ${names.join(", ")}`,
      secretObjectValue: Object.fromEntries(names.map((name) => [name, SecretValue.unsafePlainText("")])),
    });
    secret.applyRemovalPolicy(removalPolicy);
    return secret;
  }
}
