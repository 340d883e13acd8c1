/**
 * Deploy-time settings, read from CDK context (`cdk.json` or `-c key=value`)
 * and validated once, so a typo fails `cdk synth` instead of a deploy.
 */
import { RemovalPolicy } from "aws-cdk-lib";
import { LogLevel } from "aws-cdk-lib/aws-stepfunctions";
import type { Node } from "constructs";

export interface StackConfig {
  /** Context `removalPolicy`: `retain` (default) or `destroy` (dev stacks). */
  readonly removalPolicy: RemovalPolicy;
  /** Context `logLevel` -> POWERTOOLS_LOG_LEVEL (default INFO). */
  readonly logLevel: string;
  /**
   * Context `authTokenSha256`: hex SHA-256 of the API token. Only the digest
   * is ever in the template; the plaintext token stays with the caller.
   * Empty means "not configured": handlers must then reject every request.
   */
  readonly authTokenSha256: string;
  /** Context `model`: overrides the configuration's model. */
  readonly model?: string;
  /** Contexts `openaiBaseUrl` / `anthropicBaseUrl` (optional proxies, gateways). */
  readonly openaiBaseUrl?: string;
  readonly anthropicBaseUrl?: string;
  /** Context `tracing` (`true`/`false`, default true): X-Ray on Lambdas and the state machine. */
  readonly tracing: boolean;
  /** Context `stateMachineLogLevel`: ALL, ERROR (default), FATAL or OFF. */
  readonly stateMachineLogLevel: LogLevel;
  /** Context `console` (`true`/`false`, default false): deploy the web console (S3 + CloudFront). */
  readonly console: boolean;
  /** Context `config`: the agent config file (else AGENT_RUNNER_CONFIG, else ./agent-runner.config.json). */
  readonly configFile?: string;
  /** Context `workspace`: the workspace folder (else the config's workspace.dir, else ./workspace). */
  readonly workspaceDir?: string;
}

const LOG_LEVELS = ["TRACE", "DEBUG", "INFO", "WARN", "ERROR", "CRITICAL", "SILENT"];
const SHA256_HEX = /^[0-9a-f]{64}$/;

export function readConfig(node: Node): StackConfig {
  return {
    removalPolicy: readRemovalPolicy(node),
    logLevel: readLogLevel(node),
    authTokenSha256: readAuthDigest(node),
    model: readString(node, "model"),
    openaiBaseUrl: readString(node, "openaiBaseUrl"),
    anthropicBaseUrl: readString(node, "anthropicBaseUrl"),
    tracing: readBoolean(node, "tracing", true),
    stateMachineLogLevel: readStateMachineLogLevel(node),
    console: readBoolean(node, "console"),
    configFile: readString(node, "config"),
    workspaceDir: readString(node, "workspace"),
  };
}

function readString(node: Node, key: string): string | undefined {
  const value: unknown = node.tryGetContext(key);
  if (value === undefined || value === null || value === "") return undefined;
  if (typeof value !== "string") throw new Error(`context ${key} must be a string`);
  return value;
}

function readBoolean(node: Node, key: string, fallback = false): boolean {
  const value: unknown = node.tryGetContext(key);
  if (value === undefined || value === null || value === "") return fallback;
  // `-c tracing=true` arrives as a string, cdk.json may hold a real boolean.
  return value === true || value === "true";
}

function readRemovalPolicy(node: Node): RemovalPolicy {
  const value = readString(node, "removalPolicy") ?? "retain";
  if (value === "retain") return RemovalPolicy.RETAIN;
  if (value === "destroy") return RemovalPolicy.DESTROY;
  throw new Error(`context removalPolicy must be "retain" or "destroy", got "${value}"`);
}

function readStateMachineLogLevel(node: Node): LogLevel {
  const value = (readString(node, "stateMachineLogLevel") ?? "ERROR").toUpperCase();
  const levels: Record<string, LogLevel> = { ALL: LogLevel.ALL, ERROR: LogLevel.ERROR, FATAL: LogLevel.FATAL, OFF: LogLevel.OFF };
  const level = levels[value];
  if (!level) throw new Error(`context stateMachineLogLevel must be one of ${Object.keys(levels).join(", ")}`);
  return level;
}

function readLogLevel(node: Node): string {
  const value = (readString(node, "logLevel") ?? "INFO").toUpperCase();
  if (!LOG_LEVELS.includes(value)) throw new Error(`context logLevel must be one of ${LOG_LEVELS.join(", ")}`);
  return value;
}

function readAuthDigest(node: Node): string {
  const value = (readString(node, "authTokenSha256") ?? "").toLowerCase();
  // Refusing anything but a digest keeps a pasted plaintext token out of the template.
  if (value !== "" && !SHA256_HEX.test(value)) {
    throw new Error("context authTokenSha256 must be the hex SHA-256 of the token, never the token itself");
  }
  return value;
}
