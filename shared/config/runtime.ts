import type { SdkMeter } from "../aws/metering";

/**
 * Where the AWS resources are. In Lambda these come from the environment the
 * CDK stack sets; locally the embedded stack builds this object directly with
 * loopback endpoints. Every SDK client gets its endpoint from here (falling back
 * to `AWS_ENDPOINT_URL`, which is how the same code targets LocalStack).
 */
export interface RuntimeConfig {
  region: string;
  tableName: string;
  queueUrl?: string;
  stateMachineArn?: string;
  /** The loop machine: where a run goes on when its first attempt did not finish it (infra/state-machine.ts). */
  loopStateMachineArn?: string;
  /** `https://{apiId}.execute-api.{region}.amazonaws.com/{stage}` or the local equivalent. */
  webSocketManagementEndpoint?: string;
  /** SHA-256 (hex) of the bearer token clients must present. */
  authTokenSha256?: string;
  endpoints: { dynamodb?: string; sqs?: string; sfn?: string; lambda?: string };
  /**
   * This function's own name (Lambda sets AWS_LAMBDA_FUNCTION_NAME). ws-api
   * invokes itself asynchronously to post `connect.challenge` once $connect
   * has returned; absent locally, where that step runs in-process.
   */
  selfFunctionName?: string;
  /** Only for loopback emulators; in AWS the default provider chain is used. */
  credentials?: { accessKeyId: string; secretAccessKey: string };
  /** Benchmarks only: counts SDK calls and consumed capacity. Never set from the environment. */
  meter?: SdkMeter;
}

type Env = Record<string, string | undefined>;

export class MissingSettingError extends Error {
  override readonly name = "MissingSettingError";
}

export function runtimeConfigFromEnv(env: Env = process.env): RuntimeConfig {
  const shared = env.AWS_ENDPOINT_URL;
  return {
    region: env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? "us-east-1",
    tableName: required(env, "TABLE_NAME"),
    queueUrl: env.QUEUE_URL,
    stateMachineArn: env.STATE_MACHINE_ARN,
    loopStateMachineArn: env.LOOP_STATE_MACHINE_ARN,
    webSocketManagementEndpoint: env.WS_MANAGEMENT_ENDPOINT,
    authTokenSha256: env.AUTH_TOKEN_SHA256,
    endpoints: {
      dynamodb: env.AWS_ENDPOINT_URL_DYNAMODB ?? shared,
      sqs: env.AWS_ENDPOINT_URL_SQS ?? shared,
      sfn: env.AWS_ENDPOINT_URL_SFN ?? shared,
      lambda: env.AWS_ENDPOINT_URL_LAMBDA ?? shared,
    },
    selfFunctionName: env.AWS_LAMBDA_FUNCTION_NAME,
  };
}

export function requireSetting<T>(value: T | undefined, name: string): T {
  if (value === undefined || value === "") throw new MissingSettingError(`missing setting: ${name}`);
  return value;
}

function required(env: Env, name: string): string {
  return requireSetting(env[name], name);
}
