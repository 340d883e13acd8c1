import type { Context } from "aws-lambda";
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
import { createProviderKeysReader, maxAgeFromEnv, parseProviderKeys, type ProviderKeysReader } from "./provider-keys";
import { answerUnstartedChannelRun, NOTICE_IN_REQUEST_RETRY } from "../channels/unstarted-reply";
import { observedHandler } from "../observability/middleware";
import { powertools } from "../observability/powertools";

/** Everything a handler may need. Built once per cold start (or once by the local stack). */
export interface AppDeps extends RunDeps {
  queue: RunQueue;
  runtime: RuntimeConfig;
  /** Content hash of the deployed configuration this function runs (stamped on the runs it accepts). */
  configVersion?: string;
  /** ws-api in Lambda only (its handler.ts sets it; see shared/aws/self-invoke.ts). */
  invokeSelfAsync?: AsyncSelfInvoker;
  /** A channel message the intake ended unstarted (queue cap) answers its chat (shared/channels/unstarted-reply.ts). */
  answerUnstarted?: (runId: string) => Promise<void>;
}

export function buildAppDeps(runtime: RuntimeConfig, config: AgentConfig, log: RunDeps["log"], now: () => number = Date.now): AppDeps {
  const clients = createAwsClients(runtime);
  const db: Db = { doc: clients.dynamo, table: runtime.tableName, now };
  const unconfigured = (what: string) => () => {
    throw new Error(`${what} is not configured for this function`);
  };
  const queue: RunQueue = runtime.queueUrl ? createRunQueue(clients.sqs, runtime.queueUrl) : { send: unconfigured("QUEUE_URL") };
  const executions: RunExecutions = runtime.stateMachineArn
    ? createRunExecutions(clients.sfn, { run: runtime.stateMachineArn, loop: runtime.loopStateMachineArn })
    : { start: unconfigured("STATE_MACHINE_ARN") };
  return { db, pusher: createFramePusher(clients.management), config, executions, queue, log, runtime };
}

/**
 * Powertools' structured JSON logger behind the small `Log` port the shared
 * code uses: the function's one Logger, so the Lambda context and the
 * correlation keys the entry middleware appends are on every line.
 */
export function createLogger(): RunDeps["log"] {
  const { logger } = powertools();
  return {
    appendKeys: (keys) => logger.appendKeys(keys),
    info: (message, extra) => logger.info(message, { ...extra }),
    warn: (message, extra) => logger.warn(message, { ...extra }),
    error: (message, extra) => logger.error(message, { ...extra }),
  };
}

/**
 * Lambda cold start: where things are from the environment, what the agent
 * does from the deployed configuration shipped with the code
 * (`$LAMBDA_TASK_ROOT/agent-config.json`), provider keys from Secrets Manager
 * (never from the template), plugins from the bundle. Kept for the
 * container's life, except that the provider keys are re-read once they are
 * older than PROVIDER_KEYS_MAX_AGE_SECONDS (provider-keys.ts) and the
 * dependencies rebuilt when they changed. A failed build is not kept: the
 * next invocation tries again.
 */
interface Built {
  deps: AppDeps;
  keysText: string;
}
let container: { runtime: RuntimeConfig; log: RunDeps["log"]; readKeys: ProviderKeysReader } | undefined;
let built: Built | undefined;
let inflight: Promise<AppDeps> | undefined;

export function depsFromEnv(): Promise<AppDeps> {
  inflight ??= currentDeps().finally(() => {
    inflight = undefined;
  });
  return inflight;
}

async function currentDeps(): Promise<AppDeps> {
  container ??= containerSetup();
  const keysText = await container.readKeys();
  if (built?.keysText === keysText) return built.deps;
  built = { deps: await buildFromKeys(container.runtime, container.log, parseProviderKeys(keysText)), keysText };
  return built.deps;
}

function containerSetup(): NonNullable<typeof container> {
  const runtime = runtimeConfigFromEnv();
  const log = createLogger();
  const secretArn = process.env.PROVIDER_KEYS_SECRET_ARN;
  const channelArn = process.env.CHANNEL_SECRETS_ARN;
  const maxAge = secretArn || channelArn ? maxAgeFromEnv(process.env.PROVIDER_KEYS_MAX_AGE_SECONDS) : 0;
  const readProviderKeys = createProviderKeysReader(runtime.region, secretArn, maxAge, log);
  const readChannelSecrets = createProviderKeysReader(runtime.region, channelArn, maxAge, log);
  // Provider keys and channel secrets: two secrets, one map of names (shared/config/deployed.ts).
  const readKeys = async () => {
    const [keys, channels] = await Promise.all([readProviderKeys(), readChannelSecrets()]);
    return JSON.stringify({ ...parseProviderKeys(keys), ...parseProviderKeys(channels) });
  };
  return { runtime, log, readKeys };
}

async function buildFromKeys(runtime: RuntimeConfig, log: RunDeps["log"], keys: Record<string, string>): Promise<AppDeps> {
  const deployed: DeployedAgentConfig = loadDeployedConfig(process.env.LAMBDA_TASK_ROOT ?? process.cwd(), keys);
  const plugins = loadBundledPlugins(deployed.config, log);
  const deps = buildAppDeps(runtime, deployed.config, log);
  // Functions that accept runs keep the snapshot their runs will be read back with.
  if (runtime.queueUrl) await publishConfigSnapshot(deps.db, deployed.version, deployed.publicConfig);
  const configFor = configSnapshotReader(deps.db, keys);
  const full: AppDeps = { ...deps, configVersion: deployed.version, configFor, hooks: plugins.hooks, pluginTools: plugins.tools };
  return { ...full, answerUnstarted: (runId) => answerUnstartedChannelRun({ ...full, retry: NOTICE_IN_REQUEST_RETRY }, runId) };
}

/**
 * A Lambda entry point from a handler factory: dependencies are built on the
 * first invocation (cold start) and reused while the container lives (see
 * depsFromEnv for when they are rebuilt).
 */
export function lambdaEntry<E, R>(factory: (deps: AppDeps) => (event: E, context: Context) => Promise<R>) {
  let current: { deps: AppDeps; app: (event: E, context: Context) => Promise<R> } | undefined;
  // Logger context + correlation keys, X-Ray, EMF flush (shared/observability/middleware.ts).
  return observedHandler(async (event: E, context: Context): Promise<R> => {
    const deps = await depsFromEnv();
    // New dependencies only when the provider keys changed; the handler is rebuilt on them.
    if (current?.deps !== deps) current = { deps, app: factory(deps) };
    return current.app(event, context);
  });
}
