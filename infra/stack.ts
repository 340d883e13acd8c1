/**
 * AgentRunnerStack: the whole runner in one stack. Storage and messaging are
 * built here; functions, APIs, the state machine and alarms come from their
 * own modules so each piece stays small and testable.
 */
import { CfnOutput, Duration, SecretValue, Stack, type StackProps } from "aws-cdk-lib";
import { AttributeType, BillingMode, Table } from "aws-cdk-lib/aws-dynamodb";
import type { NodejsFunction } from "aws-cdk-lib/aws-lambda-nodejs";
import { LogGroup, RetentionDays } from "aws-cdk-lib/aws-logs";
import { Secret } from "aws-cdk-lib/aws-secretsmanager";
import { Queue, QueueEncryption } from "aws-cdk-lib/aws-sqs";
import type { Construct } from "constructs";
import { createAlarms } from "./alarms";
import { addWebSocketRoutes, createRestApi, createWebSocketApi } from "./apis";
import { readConfig, type StackConfig } from "./config";
import { FUNCTION_KEYS, FUNCTION_SPECS, type FunctionKey } from "./functions";
import { createFunction, stateMachineArnOf, type FunctionDeps } from "./lambdas";
import { createRunStateMachine } from "./state-machine";

/** Construct id (and default stack name) used by the app and by synth.ts. */
export const STACK_ID = "AgentRunner";

/** Keys and TTL attribute of the single table; items are typed by `pk`/`sk` prefixes. */
export const TABLE_SCHEMA = { partitionKey: "pk", sortKey: "sk", ttlAttribute: "expiresAt" } as const;

export const DLQ_MAX_RECEIVE_COUNT = 5;
/** AWS: the queue's visibility timeout should be at least 6x the consumer's timeout. */
export const VISIBILITY_TIMEOUT_FACTOR = 6;

export class AgentRunnerStack extends Stack {
  readonly config: StackConfig;

  constructor(scope: Construct, id: string, props?: StackProps) {
    super(scope, id, props);
    this.config = readConfig(this.node);
    const table = this.createTable();
    const { queue, deadLetterQueue } = this.createQueues();
    const providerKeys = this.createProviderKeysSecret();
    const ws = createWebSocketApi(this);
    // A fixed name lets functions know the ARN without a Ref (see lambdas.ts).
    const stateMachineName = `${this.stackName}-run-loop`;
    const deps: FunctionDeps = {
      config: this.config,
      table,
      queue,
      providerKeys,
      wsApiId: ws.api.apiId,
      wsStageName: ws.stage.stageName,
      wsManagementEndpoint: ws.stage.callbackUrl,
      stateMachineArn: stateMachineArnOf(this, stateMachineName),
      stateMachineName,
    };
    const fns = this.createFunctions(deps);
    addWebSocketRoutes(ws.api, fns["ws-api"]);
    const restApi = createRestApi(this, fns["rest-api"], this.config.removalPolicy);
    const stateMachine = createRunStateMachine(this, "RunStateMachine", {
      functions: fns,
      stateMachineName,
      logGroup: this.createStateMachineLogs(stateMachineName),
      tracing: this.config.tracing,
    });
    // Callers that are not tasks wait for the machine (run-finalize cannot: it is a task).
    fns.dispatcher.node.addDependency(stateMachine);
    fns.sweeper.node.addDependency(stateMachine);
    fns["rest-api"].node.addDependency(stateMachine);
    fns["ws-api"].node.addDependency(stateMachine);
    createAlarms(this, { deadLetterQueue, stateMachine, functions: fns });

    this.output("RestApiUrl", restApi.url);
    this.output("WebSocketUrl", ws.stage.url);
    this.output("TableName", table.tableName);
    this.output("QueueUrl", queue.queueUrl);
    this.output("StateMachineArn", stateMachine.stateMachineArn);
    this.output("ProviderKeysSecretArn", providerKeys.secretArn);
  }

  private createTable(): Table {
    return new Table(this, "Table", {
      partitionKey: { name: TABLE_SCHEMA.partitionKey, type: AttributeType.STRING },
      sortKey: { name: TABLE_SCHEMA.sortKey, type: AttributeType.STRING },
      timeToLiveAttribute: TABLE_SCHEMA.ttlAttribute,
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      removalPolicy: this.config.removalPolicy,
    });
  }

  private createQueues(): { queue: Queue; deadLetterQueue: Queue } {
    const deadLetterQueue = new Queue(this, "RunQueueDlq", {
      fifo: true,
      encryption: QueueEncryption.SQS_MANAGED,
      // Longer than the source queue's retention: FIFO keeps the original enqueue time.
      retentionPeriod: Duration.days(14),
    });
    const dispatcherTimeout = FUNCTION_SPECS.dispatcher.timeoutSeconds;
    const queue = new Queue(this, "RunQueue", {
      fifo: true,
      // Dedup id = run id (or the caller's idempotency key), never the body.
      contentBasedDeduplication: false,
      encryption: QueueEncryption.SQS_MANAGED,
      visibilityTimeout: Duration.seconds(VISIBILITY_TIMEOUT_FACTOR * dispatcherTimeout),
      deadLetterQueue: { queue: deadLetterQueue, maxReceiveCount: DLQ_MAX_RECEIVE_COUNT },
    });
    return { queue, deadLetterQueue };
  }

  /**
   * Provider API keys live in Secrets Manager, filled in by the operator
   * after deploy; the template only carries empty placeholders.
   */
  private createProviderKeysSecret(): Secret {
    const secret = new Secret(this, "ProviderKeys", {
      description: "agent-runner provider API keys: fill in OPENAI_API_KEY / ANTHROPIC_API_KEY",
      secretObjectValue: {
        OPENAI_API_KEY: SecretValue.unsafePlainText(""),
        ANTHROPIC_API_KEY: SecretValue.unsafePlainText(""),
      },
    });
    secret.applyRemovalPolicy(this.config.removalPolicy);
    return secret;
  }

  private createFunctions(deps: FunctionDeps): Record<FunctionKey, NodejsFunction> {
    const entries = FUNCTION_KEYS.map((key) => [key, createFunction(this, FUNCTION_SPECS[key], deps)] as const);
    return Object.fromEntries(entries) as Record<FunctionKey, NodejsFunction>;
  }

  private createStateMachineLogs(stateMachineName: string): LogGroup {
    return new LogGroup(this, "RunStateMachineLogs", {
      // The /aws/vendedlogs/ prefix keeps CloudWatch Logs' resource policy small.
      logGroupName: `/aws/vendedlogs/states/${stateMachineName}`,
      retention: RetentionDays.ONE_MONTH,
      removalPolicy: this.config.removalPolicy,
    });
  }

  private output(id: string, value: string): void {
    new CfnOutput(this, id, { value });
  }
}
