import type { Context } from "aws-lambda";
import { GetSecretValueCommand, SecretsManagerClient } from "@aws-sdk/client-secrets-manager";
import { Logger } from "@aws-lambda-powertools/logger";
import { createAwsClients } from "../aws/clients";
import { createRunExecutions, type RunExecutions } from "../aws/executions";
import { createFramePusher } from "../aws/push";
import { createRunQueue, type RunQueue } from "../aws/run-queue";
import type { AsyncSelfInvoker } from "../aws/self-invoke";
import type { Db } from "../aws/dynamo";
import type { AgentConfig } from "../config/config";
import { loadDeployedConfig, type DeployedAgentConfig } from "./deployed-config";
import { configSnapshotReader, publishConfigSnapshot } from "../aws/config-snapshots";
import { loadBundledPlugins } from "./bundled-plugins";
import { runtimeConfigFromEnv, type RuntimeConfig } from "../config/runtime";
import type { RunDeps } from "../run/deps";

/** Everything a handler may need. Built once per cold start (or once by the local stack). */
export interface AppDeps extends RunDeps {
  queue: RunQueue;
  runtime: RuntimeConfig;
  /** Content hash of the deployed configuration this function runs (stamped on the runs it accepts). */
  configVersion?: string;
  /** ws-api in Lambda only (its handler.ts sets it; see shared/aws/self-invoke.ts). */
  invokeSelfAsync?: AsyncSelfInvoker;
}

export function buildAppDeps(runtime: RuntimeConfig, config: AgentConfig, log: RunDeps["log"], now: () => number = Date.now): AppDeps {
  const clients = createAwsClients(runtime);
  const db: Db = { doc: clients.dynamo, table: runtime.tableName, now };
  const unconfigured = (what: string) => () => {
    throw new Error(`${what} is not configured for this function`);
  };
  const queue: RunQueue = runtime.queueUrl ? createRunQueue(clients.sqs, runtime.queueUrl) : { send: unconfigured("QUEUE_URL") };
  const executions: RunExecutions = runtime.stateMachineArn
    ? createRunExecutions(clients.sfn, runtime.stateMachineArn)
    : { start: unconfigured("STATE_MACHINE_ARN") };
  return { db, pusher: createFramePusher(clients.management), config, executions, queue, log, runtime };
}

/** Powertools' structured JSON logger behind the small `Log` port the shared code uses. */
export function createLogger(serviceName = "agent-runner"): RunDeps["log"] {
  const logger = new Logger({ serviceName });
  return {
    info: (message, extra) => logger.info(message, { ...extra }),
    warn: (message, extra) => logger.warn(message, { ...extra }),
    error: (message, extra) => logger.error(message, { ...extra }),
  };
}

/**
 * Lambda cold start: where things are from the environment, what the agent
 * does from the deployed configuration shipped with the code
 * (`$LAMBDA_TASK_ROOT/agent-config.json`), provider keys from Secrets Manager
 * (never from the template), plugins from the bundle; cached for the
 * container's life.
 */
let cached: Promise<AppDeps> | undefined;
export function depsFromEnv(): Promise<AppDeps> {
  cached ??= (async () => {
    const runtime = runtimeConfigFromEnv();
    const log = createLogger();
    // Provider keys and channel secrets: two secrets, one map of names (shared/config/deployed.ts).
    const keys = { ...(await secretValues(runtime.region, process.env.PROVIDER_KEYS_SECRET_ARN)), ...(await secretValues(runtime.region, process.env.CHANNEL_SECRETS_ARN)) };
    const deployed: DeployedAgentConfig = loadDeployedConfig(process.env.LAMBDA_TASK_ROOT ?? process.cwd(), keys);
    const plugins = loadBundledPlugins(deployed.config, log);
    const deps = buildAppDeps(runtime, deployed.config, log);
    // Functions that accept runs keep the snapshot their runs will be read back with.
    if (runtime.queueUrl) await publishConfigSnapshot(deps.db, deployed.version, deployed.publicConfig);
    const configFor = configSnapshotReader(deps.db, keys);
    return { ...deps, configVersion: deployed.version, configFor, hooks: plugins.hooks, pluginTools: plugins.tools };
  })();
  return cached;
}

async function secretValues(region: string, secretArn: string | undefined): Promise<Record<string, string>> {
  if (!secretArn) return {};
  const client = new SecretsManagerClient({ region });
  const out = await client.send(new GetSecretValueCommand({ SecretId: secretArn }));
  const parsed = JSON.parse(out.SecretString ?? "{}") as Record<string, unknown>;
  // Empty placeholders mean "not configured": the offline model stays the default.
  return Object.fromEntries(Object.entries(parsed).filter((entry): entry is [string, string] => typeof entry[1] === "string" && entry[1] !== ""));
}

/**
 * A Lambda entry point from a handler factory: dependencies are built on the
 * first invocation (cold start) and reused while the container lives.
 */
export function lambdaEntry<E, R>(factory: (deps: AppDeps) => (event: E, context: Context) => Promise<R>) {
  let app: ((event: E, context: Context) => Promise<R>) | undefined;
  return async (event: E, context: Context): Promise<R> => {
    app ??= factory(await depsFromEnv());
    return app(event, context);
  };
}
