/**
 * Turns the rows of `FUNCTION_SPECS` into Lambda functions with exactly the
 * grants and environment each row asks for. Nothing here decides *what* a
 * function may do; that lives in the table.
 */
import { fileURLToPath } from "node:url";
import { basename } from "node:path";
import { ArnFormat, AssetHashType, Duration, Stack, Tags } from "aws-cdk-lib";
import type { ITable } from "aws-cdk-lib/aws-dynamodb";
import { Rule, Schedule } from "aws-cdk-lib/aws-events";
import { LambdaFunction } from "aws-cdk-lib/aws-events-targets";
import { Policy, PolicyStatement } from "aws-cdk-lib/aws-iam";
import { Architecture, Code, Function as LambdaFn, Runtime, Tracing } from "aws-cdk-lib/aws-lambda";
import { SqsEventSource } from "aws-cdk-lib/aws-lambda-event-sources";
import { LogGroup, type RetentionDays } from "aws-cdk-lib/aws-logs";
import type { ISecret } from "aws-cdk-lib/aws-secretsmanager";
import type { IQueue } from "aws-cdk-lib/aws-sqs";
import type { Construct } from "constructs";
import type { RemovalPolicy } from "aws-cdk-lib";
import { FUNCTION_KEY_TAG, SERVICE_NAME, type FunctionSpec } from "./functions";
import { METRICS_NAMESPACE } from "../shared/observability/names";

/** Repository root: entries and the lock file resolve from here, whatever the cwd. */
export const REPO_ROOT = fileURLToPath(new URL("..", import.meta.url));

/** What the functions are wired to; ARNs may be tokens. */
export interface FunctionDeps {
  readonly settings: FunctionSettings;
  /** Function key -> its staged code asset (bundle + deployed configuration; infra/assets.ts). */
  readonly assets: Readonly<Record<string, string>>;
  readonly table: ITable;
  readonly queue: IQueue;
  readonly providerKeys: ISecret;
  readonly channelSecrets?: ISecret;
  readonly wsApiId: string;
  readonly wsStageName: string;
  /** https://<apiId>.execute-api.<region>.amazonaws.com/<stage> */
  readonly wsManagementEndpoint: string;
  /**
   * Built from the state machine's fixed name, not a Ref: run-finalize is
   * both a task of the state machine and a caller of it, and a Ref would be a
   * CloudFormation dependency cycle.
   */
  readonly stateMachineArn: string;
  readonly stateMachineName: string;
  /** The loop machine (a run goes on there when its first attempt did not finish it), by name too. */
  readonly loopStateMachineArn: string;
  readonly loopStateMachineName: string;
}

/** Deploy-time settings every function shares (from the construct's props). */
export interface FunctionSettings {
  readonly removalPolicy: RemovalPolicy;
  readonly logRetention: RetentionDays;
  readonly logLevel: string;
  readonly tracing: boolean;
  readonly authTokenSha256: string;
  /** PROVIDER_KEYS_MAX_AGE_SECONDS of the functions that read the provider-keys secret (config `secrets.maxAgeSeconds`). */
  readonly providerKeysMaxAgeSeconds?: number;
}

export function createFunction(scope: Construct, spec: FunctionSpec, deps: FunctionDeps): LambdaFn {
  const id = constructIdOf(spec.key);
  const fn = new LambdaFn(scope, id, {
    // The staged folder's name is already a content hash (infra/assets.ts): CDK need not fingerprint 6 MB again.
    code: Code.fromAsset(deps.assets[spec.key], { assetHash: basename(deps.assets[spec.key]), assetHashType: AssetHashType.CUSTOM }),
    handler: "index.handler",
    runtime: Runtime.NODEJS_22_X,
    architecture: Architecture.ARM_64,
    timeout: Duration.seconds(spec.timeoutSeconds),
    memorySize: spec.memoryMb,
    description: `agent-runner ${spec.key}`,
    logGroup: new LogGroup(scope, `${id}Logs`, {
      retention: deps.settings.logRetention,
      removalPolicy: deps.settings.removalPolicy,
    }),
    tracing: deps.settings.tracing ? Tracing.ACTIVE : Tracing.DISABLED,
    environment: environmentFor(spec, deps),
    ...(spec.reservedConcurrency !== undefined ? { reservedConcurrentExecutions: spec.reservedConcurrency } : {}),
  });
  Tags.of(fn).add(FUNCTION_KEY_TAG, spec.key, { includeResourceTypes: ["AWS::Lambda::Function"] });
  grantFor(fn, spec, deps);
  attachTrigger(scope, fn, spec, deps);
  return fn;
}

/** `run-finalize` -> `RunFinalizeFn` */
import { constructIdOf } from "./function-keys";

export { constructIdOf };

/**
 * Only where things are and how to log: everything the agent does comes from
 * the deployed configuration shipped with the code (shared/config/deployed.ts).
 */
export function environmentFor(spec: FunctionSpec, deps: FunctionDeps): Record<string, string> {
  const { settings } = deps;
  const env: Record<string, string> = {
    TABLE_NAME: deps.table.tableName,
    POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
    POWERTOOLS_LOG_LEVEL: settings.logLevel,
    POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
    // The tracer follows the function's X-Ray mode (the local deployer turns it off: no daemon on loopback).
    POWERTOOLS_TRACE_ENABLED: String(settings.tracing),
  };
  if (spec.intake) {
    env.QUEUE_URL = deps.queue.queueUrl;
    env.AUTH_TOKEN_SHA256 = settings.authTokenSha256;
  }
  if (spec.authToken) env.AUTH_TOKEN_SHA256 = settings.authTokenSha256;
  if (spec.wsManagement.length > 0) env.WS_MANAGEMENT_ENDPOINT = deps.wsManagementEndpoint;
  if (spec.states.length > 0) {
    env.STATE_MACHINE_ARN = deps.stateMachineArn;
    env.LOOP_STATE_MACHINE_ARN = deps.loopStateMachineArn;
  }
  if (spec.providers) env.PROVIDER_KEYS_SECRET_ARN = deps.providerKeys.secretArn;
  if (spec.providers) env.PROVIDER_KEYS_MAX_AGE_SECONDS = String(settings.providerKeysMaxAgeSeconds ?? 300);
  if (spec.channelSecrets && deps.channelSecrets) env.CHANNEL_SECRETS_ARN = deps.channelSecrets.secretArn;
  return env;
}

function grantFor(fn: LambdaFn, spec: FunctionSpec, deps: FunctionDeps): void {
  // table.grant scopes to the table ARN (and its indexes; there are none).
  deps.table.grant(fn, ...spec.dynamodb.map((action) => `dynamodb:${action}`));
  if (spec.intake) deps.queue.grantSendMessages(fn);
  if (spec.providers) deps.providerKeys.grantRead(fn);
  if (spec.channelSecrets && deps.channelSecrets) deps.channelSecrets.grantRead(fn);
  if (spec.wsManagement.length > 0) fn.addToRolePolicy(manageConnectionsStatement(fn, spec, deps));
  for (const statement of statesStatements(fn, spec, deps)) fn.addToRolePolicy(statement);
  if (spec.selfInvoke) grantSelfInvoke(fn);
}

/**
 * A separate policy, not the role's default one: the function depends on its
 * default policy, so naming its own ARN there would be a dependency cycle.
 */
function grantSelfInvoke(fn: LambdaFn): void {
  const statement = new PolicyStatement({ actions: ["lambda:InvokeFunction"], resources: [fn.functionArn] });
  fn.role?.attachInlinePolicy(new Policy(fn, "SelfInvokePolicy", { statements: [statement] }));
}

function manageConnectionsStatement(scope: Construct, spec: FunctionSpec, deps: FunctionDeps): PolicyStatement {
  const resources = spec.wsManagement.map((method) =>
    Stack.of(scope).formatArn({
      service: "execute-api",
      resource: deps.wsApiId,
      resourceName: `${deps.wsStageName}/${method}/@connections/*`,
      arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
    }),
  );
  return new PolicyStatement({ actions: ["execute-api:ManageConnections"], resources });
}

/**
 * Both machines: a run starts in the run machine and may go on in the loop
 * machine (hand-off, continue-as-new, a paused task's token), and whoever
 * starts, answers or inspects a run's executions may meet either.
 */
function statesStatements(scope: Construct, spec: FunctionSpec, deps: FunctionDeps): PolicyStatement[] {
  const statements: PolicyStatement[] = [];
  const machines = [deps.stateMachineArn, deps.loopStateMachineArn];
  if (spec.states.includes("StartExecution")) {
    statements.push(new PolicyStatement({ actions: ["states:StartExecution"], resources: machines }));
  }
  // Task answers are authorized on the machine whose task issued the token (CDK's grantTaskResponse).
  if (spec.states.includes("SendTaskSuccess")) {
    statements.push(new PolicyStatement({ actions: ["states:SendTaskSuccess"], resources: machines }));
  }
  // Describe/Stop act on executions, whose ARNs differ from the machines'.
  const onExecutions = spec.states.filter((action) => action !== "StartExecution" && action !== "SendTaskSuccess");
  if (onExecutions.length > 0) {
    const executions = [deps.stateMachineName, deps.loopStateMachineName].map((name) => Stack.of(scope).formatArn({
      service: "states",
      resource: "execution",
      resourceName: `${name}:*`,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    }));
    statements.push(new PolicyStatement({ actions: onExecutions.map((a) => `states:${a}`), resources: executions }));
  }
  return statements;
}

function attachTrigger(scope: Construct, fn: LambdaFn, spec: FunctionSpec, deps: FunctionDeps): void {
  if (spec.trigger === "run-queue") {
    // Partial batch failures: one bad message must not replay its whole batch.
    fn.addEventSource(new SqsEventSource(deps.queue, { batchSize: 10, reportBatchItemFailures: true }));
  } else if (spec.trigger === "every-minute") {
    new Rule(scope, `${constructIdOf(spec.key)}Schedule`, {
      schedule: Schedule.rate(Duration.minutes(1)),
      targets: [new LambdaFunction(fn)],
    });
  }
  if (spec.onExecutionEnded) {
    new Rule(scope, `${constructIdOf(spec.key)}ExecutionEnded`, {
      description: "A run execution ended without finalizing (stopped, timed out, failed): end the run, hand its lane on.",
      eventPattern: {
        source: ["aws.states"],
        detailType: ["Step Functions Execution Status Change"],
        detail: { status: ["FAILED", "TIMED_OUT", "ABORTED"], stateMachineArn: [deps.stateMachineArn, deps.loopStateMachineArn] },
      },
      targets: [new LambdaFunction(fn)],
    });
  }
}

/** The state machine ARN from its fixed name (see FunctionDeps.stateMachineArn). */
export function stateMachineArnOf(scope: Construct, stateMachineName: string): string {
  return Stack.of(scope).formatArn({
    service: "states",
    resource: "stateMachine",
    resourceName: stateMachineName,
    arnFormat: ArnFormat.COLON_RESOURCE_NAME,
  });
}
