/**
 * Phase two of a local deploy: what invokes the functions, read from the
 * template. API Gateway (REST proxy method, WebSocket routes and their
 * invocation type), the state machine (definition with its substitutions,
 * tasks bound to the deployed functions), SQS event source mappings
 * (BatchSize, FunctionResponseTypes), EventBridge rules (schedule rate,
 * Step Functions status-change pattern) and the stack outputs.
 */
import { SQSClient } from "@aws-sdk/client-sqs";
import type { AgentConfig } from "../../../shared/config/config";
import { loadDeployedConfig } from "../../../shared/runtime/deployed-config";
import type { Log } from "../../../shared/run/deps";
import type { CfnResource } from "../../synth";
import { startLocalApiGateway, type LocalRestRoute } from "../api-gateway";
import { CONSOLE_DIR, CONSOLE_PATH } from "../../console-files";
import type { AwsEdge } from "../aws-edge";
import { createLambdaContext } from "../lambda-context";
import { startSqsEventSource, type SqsEventSource } from "../sqs-event-source";
import type { LocalExecutionEvent, LocalStepFunctions } from "../step-functions";
import { startLocalSweeper, type LocalSweeper } from "../sweeper";
import type { LoadedAssembly } from "./assembly";
import { LOCAL_SECRET_KEY, localizeUrl, type DeployedFunction, type DeployedResources } from "./deploy";
import { readEdgeAuthorization } from "./edge-auth";
import { resolveValue } from "./intrinsics";
import { poolInvokers, restRoutesOf, toLocalRoutes, type AroundInvoke, type Invoker } from "./rest-routes";

export interface WiringOptions {
  host?: string;
  port: number;
  edge: AwsEdge;
  sfn: LocalStepFunctions;
  region: string;
  accountId: string;
  sweepIntervalMs?: number;
  waitStateMs?: Record<string, number>;
  around?: AroundInvoke;
  log: Log;
  executionListeners: ((event: LocalExecutionEvent) => void)[];
  /** Asynchronous invocations (the WebSocket method routes): delay between Lambda's retries. */
  asyncRetryDelayMs?: number;
  /** An asynchronous invocation ran out of retries (the stack sends Lambda's record to the OnFailure destination). */
  onAsyncFailure?: (fn: DeployedFunction, payload: string, error: unknown, attempts: number) => void;
}

export interface Wiring {
  restUrl: string;
  webSocketUrl: string;
  managementEndpoint: string;
  runQueueUrl?: string;
  stateMachineArn?: string;
  /** The loop machine a run goes on in when its first attempt did not finish it. */
  loopStateMachineArn?: string;
  /** The configuration the deployed functions run (keys blanked), for test-side inspection deps. */
  config: AgentConfig;
  outputs: Record<string, string>;
  idle(): Promise<void>;
  sweepNow(): Promise<unknown>;
  close(): Promise<void>;
}

type Entry = [string, CfnResource];

export async function wireTriggers(assembly: LoadedAssembly, deployed: DeployedResources, options: WiringOptions): Promise<Wiring> {
  const entries = Object.entries(assembly.template.Resources ?? {});
  const closers: (() => Promise<void>)[] = [];
  const { invoke } = poolInvokers(options.around);
  const gateway = await startFrontDoor(entries, deployed, options, invoke);
  closers.push(() => gateway.close());
  const machine = registerStateMachines(entries, deployed, options, invoke);
  const sources = startEventSources(entries, deployed, options, invoke);
  closers.push(...sources.map((source) => () => source.stop()));
  const rules = startRules(entries, deployed, options, invoke, machine?.arn);
  closers.push(...rules.map((rule) => () => rule.stop()));
  const attempt = [...deployed.functions.values()].find((fn) => fn.environment.PROVIDER_KEYS_SECRET_ARN) ?? [...deployed.functions.values()][0];
  const outputs = resolveOutputs(assembly, deployed, { restUrl: gateway.restUrl, webSocketUrl: gateway.webSocketUrl, edge: options.edge.endpoint });
  return {
    restUrl: gateway.restUrl,
    webSocketUrl: gateway.webSocketUrl,
    managementEndpoint: gateway.managementEndpoint,
    // The run queue is the FIFO one (ws-api also consumes its failure records from a standard queue).
    runQueueUrl: (sources.find((source) => source.queueUrl.endsWith(".fifo")) ?? sources[0])?.queueUrl,
    stateMachineArn: machine?.arn,
    loopStateMachineArn: machine?.loopArn,
    config: loadDeployedConfig(attempt.environment.LAMBDA_TASK_ROOT, {}).config,
    outputs,
    idle: async () => {
      for (;;) {
        await gateway.asyncIdle();
        await Promise.all(sources.map((source) => source.idle()));
        await Promise.all(rules.map((rule) => rule.idle()));
        await options.sfn.waitForIdle();
        const busy = [...deployed.functions.values()].some((fn) => fn.pool.busyCount() > 0);
        if (!busy) return;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    sweepNow: () => Promise.all(rules.map((rule) => rule.sweepNow())),
    close: async () => {
      for (const close of closers) await close().catch(() => undefined);
    },
  };
}

function functionOfIntegrationUri(uri: unknown, deployed: DeployedResources, resolve: (v: unknown) => unknown): DeployedFunction {
  const text = String(resolve(uri));
  const match = /functions\/(arn:aws:lambda:[^/]+)\/invocations/.exec(text);
  const fn = match ? [...deployed.functions.values()].find((candidate) => candidate.arn === match[1]) : undefined;
  if (!fn) throw new Error(`integration ${text} does not invoke a function of this stack`);
  return fn;
}

async function startFrontDoor(entries: Entry[], deployed: DeployedResources, options: WiringOptions, invoke: Invoker) {
  const resolve = (value: unknown) => resolveValue(value, deployed.scope);
  const edgeAuth = readEdgeAuthorization(entries, invoke, (uri) => functionOfIntegrationUri(uri, deployed, resolve));
  const restFn = functionOfIntegrationUri(edgeAuth.restFunctionUri, deployed, resolve);
  const integrations = new Map(entries.filter(([, r]) => r.Type === "AWS::ApiGatewayV2::Integration").map(([id, r]) => [id, r]));
  const routes = entries.filter(([, r]) => r.Type === "AWS::ApiGatewayV2::Route").map(([, r]) => {
    const target = String(resolve(r.Properties?.Target));
    const integrationId = [...integrations.keys()].find((id) => target === `integrations/${deployed.scope.resources.get(id)?.ref}`);
    const integration = integrationId ? integrations.get(integrationId)! : undefined;
    return { routeKey: String(r.Properties?.RouteKey), integration };
  });
  const wsFns = new Set(routes.map((route) => (route.integration ? functionOfIntegrationUri(route.integration.Properties?.IntegrationUri, deployed, resolve) : undefined)));
  if (wsFns.size !== 1 || !([...wsFns][0])) throw new Error("locally every WebSocket route must integrate the same function");
  const wsFn = [...wsFns][0]!;
  const asyncRoutes = routes.filter((route) => JSON.stringify(route.integration?.Properties?.RequestParameters ?? {}).includes("X-Amz-Invocation-Type"));
  const stage = entries.find(([, r]) => r.Type === "AWS::ApiGatewayV2::Stage")?.[1].Properties?.StageName;
  // Streamed integrations are invoked with InvokeWithResponseStream (the function's pool streams chunks).
  const { invokeStream } = poolInvokers(options.around);
  // Each method's integration (buffered or streamed) with its authorizer from the same template method.
  const restRoutes = withAuthorizers(toLocalRoutes(restRoutesOf(entries, deployed), invoke, invokeStream), edgeAuth.restRoutes);
  return startLocalApiGateway({
    restRoutes,
    host: options.host,
    port: options.port,
    stage: String(stage ?? "production"),
    restHandler: (event, _context, progress) => invoke(restFn)(event, progress),
    staticSites: [{ prefix: `/${CONSOLE_PATH}`, dir: CONSOLE_DIR }],
    gatewayResponses: edgeAuth.gatewayResponses,
    webSocketHandler: (event, _context, progress) => invoke(wsFn)(event, progress),
    ...(edgeAuth.connectAuthorizer ? { connectAuthorizer: edgeAuth.connectAuthorizer } : {}),
    webSocketRoutes: routes.map((route) => route.routeKey).filter((key) => !key.startsWith("$")).sort(),
    createContext: (functionName, timeoutMs) => createLambdaContext(functionName, timeoutMs),
    ...(asyncRoutes.length > 0 ? { webSocketAsyncInvocation: asyncInvocationOf(wsFn, options) } : {}),
  });
}

/** The WebSocket async route runs with the function's EventInvokeConfig (retries, OnFailure), as Lambda's async queue does. */
function asyncInvocationOf(fn: DeployedFunction, options: WiringOptions) {
  return {
    functionTimeoutMs: fn.pool.definition.timeoutSeconds * 1000,
    maxRetryAttempts: fn.maxRetryAttempts,
    ...(options.asyncRetryDelayMs !== undefined ? { retryDelayMs: options.asyncRetryDelayMs } : {}),
    onRetriesExhausted: (event: unknown, error: unknown, attempts: number) => options.onAsyncFailure?.(fn, JSON.stringify(event), error, attempts),
  };
}

/**
 * Every state machine of the template (the run machine and the loop machine),
 * its Task states bound to the deployed functions. Answers the run machine
 * and the loop machine: the ones the functions' STATE_MACHINE_ARN and
 * LOOP_STATE_MACHINE_ARN name.
 */
function registerStateMachines(entries: Entry[], deployed: DeployedResources, options: WiringOptions, invoke: (fn: DeployedFunction) => <R>(event: unknown) => Promise<R>) {
  const machines = entries.filter(([, r]) => r.Type === "AWS::StepFunctions::StateMachine");
  if (machines.length === 0) return undefined;
  const taskHandlers: Record<string, (input: unknown) => Promise<unknown>> = {};
  const taskTimeoutsMs: Record<string, number> = {};
  for (const fn of deployed.functions.values()) {
    taskHandlers[fn.arn] = (input) => invoke(fn)(input);
    // The sandbox enforces the function's own timeout; the task waits a little longer to hear it.
    taskTimeoutsMs[fn.arn] = fn.pool.definition.timeoutSeconds * 1000 + 1000;
  }
  const arns = machines.map(([logicalId, resource]) => {
    const properties = resolveValue(resource.Properties ?? {}, deployed.scope) as { DefinitionString?: string; Definition?: object; DefinitionSubstitutions?: Record<string, string> };
    let text = properties.DefinitionString ?? JSON.stringify(properties.Definition ?? {});
    for (const [key, value] of Object.entries(properties.DefinitionSubstitutions ?? {})) text = text.replaceAll(`\${${key}}`, value);
    const name = deployed.scope.resources.get(logicalId)!.attributes.Name;
    return options.sfn.register({ name, definition: JSON.parse(text) as object, taskHandlers, taskTimeoutsMs, waitStateMs: options.waitStateMs });
  });
  const envOf = (key: string) => [...deployed.functions.values()].map((fn) => fn.environment[key]).find((arn) => arn && arns.includes(arn));
  return { arn: envOf("STATE_MACHINE_ARN") ?? arns[0], loopArn: envOf("LOOP_STATE_MACHINE_ARN") };
}

function startEventSources(entries: Entry[], deployed: DeployedResources, options: WiringOptions, invoke: (fn: DeployedFunction) => <R>(event: unknown) => Promise<R>) {
  return entries
    .filter(([, r]) => r.Type === "AWS::Lambda::EventSourceMapping")
    .map(([, resource]) => {
      const properties = resolveValue(resource.Properties ?? {}, deployed.scope) as { EventSourceArn: string; FunctionName: string; BatchSize?: number; Enabled?: boolean };
      const fn = deployed.byName.get(properties.FunctionName) ?? [...deployed.functions.values()].find((f) => f.arn === properties.FunctionName);
      const queueUrl = deployed.queueUrlForArn(properties.EventSourceArn);
      if (!fn || !queueUrl) throw new Error(`event source mapping ${properties.EventSourceArn} -> ${properties.FunctionName}: unknown queue or function`);
      // The poller acts with the function's role, as Lambda's does: its sqs:ReceiveMessage / DeleteMessage grants are checked.
      const sqsClient = new SQSClient({ region: options.region, endpoint: options.edge.endpoint, credentials: { accessKeyId: fn.accessKeyId, secretAccessKey: LOCAL_SECRET_KEY } });
      const source: SqsEventSource = startSqsEventSource({
        sqsClient,
        queueUrl,
        queueArn: properties.EventSourceArn,
        region: options.region,
        handler: (event) => invoke(fn)(event),
        functionName: fn.name,
        functionTimeoutMs: fn.pool.definition.timeoutSeconds * 1000,
        batchSize: properties.BatchSize ?? 10,
        waitTimeSeconds: 1,
        concurrency: 2,
        logger: { warn: (m, d) => options.log.warn(m, d), error: (m, d) => options.log.error(m, d) },
      });
      return Object.assign(source, { queueUrl });
    });
}

const RATE = /^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$/;
const UNIT_MS: Record<string, number> = { minute: 60_000, minutes: 60_000, hour: 3_600_000, hours: 3_600_000, day: 86_400_000, days: 86_400_000 };

function startRules(entries: Entry[], deployed: DeployedResources, options: WiringOptions, invoke: (fn: DeployedFunction) => <R>(event: unknown) => Promise<R>, stateMachineArn: string | undefined): LocalSweeper[] {
  const sweepers: LocalSweeper[] = [];
  for (const [, resource] of entries.filter(([, r]) => r.Type === "AWS::Events::Rule")) {
    const properties = resolveValue(resource.Properties ?? {}, deployed.scope) as { ScheduleExpression?: string; EventPattern?: { source?: string[]; detail?: { status?: string[]; stateMachineArn?: string[] } }; Targets?: { Arn: string }[]; State?: string };
    if (properties.State === "DISABLED") continue;
    for (const target of properties.Targets ?? []) {
      const fn = [...deployed.functions.values()].find((f) => f.arn === target.Arn);
      if (!fn) continue;
      const schedule = properties.ScheduleExpression ? RATE.exec(properties.ScheduleExpression) : null;
      const onStates = properties.EventPattern?.source?.includes("aws.states");
      if (!schedule && !onStates) continue;
      const sweeper = startLocalSweeper({
        invoke: (event) => invoke(fn)(event),
        intervalMs: schedule ? options.sweepIntervalMs ?? Number(schedule[1]) * UNIT_MS[schedule[2]] : 0,
        region: options.region,
        accountId: options.accountId,
        onError: (error) => options.log.error("rule target invocation failed", { function: fn.name, error: String(error) }),
        ...(onStates ? { statuses: properties.EventPattern?.detail?.status ?? [], stateMachineArns: properties.EventPattern?.detail?.stateMachineArn ?? (stateMachineArn ? [stateMachineArn] : []) } : { statuses: [] }),
      });
      if (onStates) options.executionListeners.push(sweeper.onExecutionEvent);
      sweepers.push(Object.assign(sweeper, { scheduled: Boolean(schedule) }));
    }
  }
  // sweepNow runs the scheduled rules only (what the every-minute timer does).
  return sweepers.map((sweeper) => ((sweeper as LocalSweeper & { scheduled: boolean }).scheduled ? sweeper : { ...sweeper, sweepNow: async () => undefined }));
}

function resolveOutputs(assembly: LoadedAssembly, deployed: DeployedResources, urls: { restUrl: string; webSocketUrl: string; edge: string }): Record<string, string> {
  const outputs: Record<string, string> = {};
  for (const [name, output] of Object.entries((assembly.template.Outputs ?? {}) as Record<string, { Value: unknown }>)) {
    try {
      const value = String(resolveValue(output.Value, deployed.scope));
      outputs[name] = value
        .replace(/https:\/\/[a-z0-9]+\.execute-api\.[a-z0-9-]+\.amazonaws\.com\/[^/\s]+\/(?=v1|$)/g, `${urls.restUrl}/`)
        .replace(/wss:\/\/[a-z0-9]+\.execute-api\.[a-z0-9-]+\.amazonaws\.com\/[^/\s]+/g, urls.webSocketUrl);
      if (outputs[name] === value) outputs[name] = localizeUrl(value, urls.edge);
    } catch {
      // An output naming something only AWS knows (e.g. a CloudFront domain) is left out locally.
    }
  }
  return outputs;
}

/** The authorizer of each REST method (infra/local/deploy/edge-auth.ts), joined to its integration by resource path and verb. */
function withAuthorizers(routes: LocalRestRoute[], authorized: readonly LocalRestRoute[]): LocalRestRoute[] {
  return routes.map((route) => {
    const authorizer = authorized.find((a) => a.resourcePath === route.resourcePath && a.httpMethod === route.httpMethod)?.authorizer;
    return authorizer ? { ...route, authorizer } : route;
  });
}
