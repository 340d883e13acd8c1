/**
 * The Lambda boundary, emulated in-process: a real-shaped `Context` and an
 * invoker that behaves like a synchronous `Invoke` (RequestResponse).
 *
 * What the caller of a Lambda function sees in AWS, and what we mirror:
 * - the event and the result cross the boundary as JSON (no `Date`, no class
 *   instances, no `undefined` fields survive);
 * - the request payload is capped at 6 MB: Lambda's Invoke API rejects it
 *   before the function runs (`RequestEntityTooLargeException`);
 * - the response payload is capped at 6 MB: the function ran, but the caller
 *   gets a function error `Function.ResponseSizeTooLarge`;
 * - a thrown error reaches the caller as the Node.js runtime serializes it:
 *   `{ errorType, errorMessage, trace }` (errorType = `error.name`);
 * - a function that outlives its configured timeout is reported as a function
 *   error `Sandbox.Timedout` with the message
 *   `RequestId: <id> Error: Task timed out after N.NN seconds` (the payload
 *   Lambda returns since its late-2023 runtime change; older runtimes had no
 *   errorType, which Step Functions surfaced as `Lambda.Unknown`; the Step
 *   Functions best-practice page still says `Lambda.Unknown`). Either way an
 *   ASL that must handle a function timeout should match `States.TaskFailed`
 *   or `States.ALL`, never one of those two names: then it is right in AWS
 *   whichever name AWS reports. `States.Timeout` is a different thing: the
 *   Task state's own `TimeoutSeconds`.
 *
 * What we cannot mirror: AWS freezes a timed-out sandbox; in one Node process
 * the handler's promise keeps running after we stop waiting for it.
 */
import { randomBytes, randomUUID } from "node:crypto";
import type { Context } from "aws-lambda";

/** Lambda's synchronous invocation payload quota, request and response (6 MB). */
export const LAMBDA_SYNC_PAYLOAD_LIMIT_BYTES = 6 * 1024 * 1024;
/** Lambda's own default function timeout (also CDK's default). */
export const LAMBDA_DEFAULT_TIMEOUT_MS = 3_000;
export const LAMBDA_TIMEOUT_ERROR_TYPE = "Sandbox.Timedout";
export const LAMBDA_RESPONSE_TOO_LARGE_ERROR_TYPE = "Function.ResponseSizeTooLarge";

const DEFAULT_REGION = "us-east-1";
const DEFAULT_ACCOUNT_ID = "000000000000";
const DEFAULT_MEMORY_MB = 128;

/** The minimal logger the local stack's emulators accept (console fits). */
export interface LocalLogger {
  info?(message: string, details?: Record<string, unknown>): void;
  warn(message: string, details?: Record<string, unknown>): void;
  error(message: string, details?: Record<string, unknown>): void;
}

export type LambdaHandler<TEvent = unknown, TResult = unknown> = (
  event: TEvent,
  context: Context,
) => Promise<TResult> | TResult;

export interface LambdaContextOptions {
  region?: string;
  accountId?: string;
  memoryLimitInMB?: number;
}

export interface InvokeLikeLambdaOptions extends LambdaContextOptions {
  functionName: string;
  timeoutMs: number;
}

/** The payload a Node.js Lambda runtime reports for a failed invocation. */
export interface LambdaErrorPayload {
  errorType: string;
  errorMessage: string;
  trace?: string[];
}

/** The function ran and failed (Invoke answered with `FunctionError: Unhandled`). */
export class LambdaFunctionError extends Error {
  readonly payload: LambdaErrorPayload;

  constructor(payload: LambdaErrorPayload) {
    super(payload.errorMessage);
    this.name = payload.errorType;
    this.payload = payload;
  }
}

/** The Lambda service refused the invocation; the function never ran. */
export class LambdaServiceError extends Error {
  constructor(name: string, message: string) {
    super(message);
    this.name = name;
  }
}

export function createLambdaContext(
  functionName: string,
  timeoutMs: number,
  options: LambdaContextOptions = {},
): Context {
  const region = options.region ?? process.env.AWS_REGION ?? DEFAULT_REGION;
  const accountId = options.accountId ?? DEFAULT_ACCOUNT_ID;
  const deadline = Date.now() + timeoutMs;
  const noop = (): void => undefined;
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: "$LATEST",
    invokedFunctionArn: `arn:aws:lambda:${region}:${accountId}:function:${functionName}`,
    memoryLimitInMB: String(options.memoryLimitInMB ?? DEFAULT_MEMORY_MB),
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: logStreamName(),
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: noop,
    fail: noop,
    succeed: noop,
  };
}

/**
 * Invokes `handler` the way a synchronous Lambda Invoke would. Resolves with
 * the JSON-round-tripped result; rejects with `LambdaFunctionError` (the
 * function failed, timed out or answered too much) or `LambdaServiceError`
 * (the request was refused).
 */
export async function invokeLikeLambda<T>(
  handler: LambdaHandler<never, T>,
  event: unknown,
  options: InvokeLikeLambdaOptions,
): Promise<T> {
  const requestJson = toRequestJson(event);
  const context = createLambdaContext(options.functionName, options.timeoutMs, options);
  const result = await runWithTimeout(
    () => (handler as LambdaHandler<unknown, T>)(JSON.parse(requestJson), context),
    options.timeoutMs,
    context.awsRequestId,
  );
  return fromResponseJson(toResponseJson(result)) as T;
}

function toRequestJson(event: unknown): string {
  // Invoke without a payload hands the function `{}`.
  const json = event === undefined ? "{}" : JSON.stringify(event);
  const bytes = Buffer.byteLength(json, "utf8");
  if (bytes > LAMBDA_SYNC_PAYLOAD_LIMIT_BYTES) {
    throw new LambdaServiceError(
      "RequestEntityTooLargeException",
      `Request must be smaller than ${LAMBDA_SYNC_PAYLOAD_LIMIT_BYTES} bytes for the InvokeFunction operation`,
    );
  }
  return json;
}

function toResponseJson(result: unknown): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(result);
  } catch (error) {
    throw new LambdaFunctionError(toErrorPayload(error));
  }
  // A handler that returns nothing answers the JSON `null`.
  json ??= "null";
  const bytes = Buffer.byteLength(json, "utf8");
  if (bytes > LAMBDA_SYNC_PAYLOAD_LIMIT_BYTES) {
    throw new LambdaFunctionError({
      errorType: LAMBDA_RESPONSE_TOO_LARGE_ERROR_TYPE,
      errorMessage: `Response payload size (${bytes} bytes) exceeded maximum allowed payload size (${LAMBDA_SYNC_PAYLOAD_LIMIT_BYTES} bytes).`,
    });
  }
  return json;
}

function fromResponseJson(json: string): unknown {
  return JSON.parse(json);
}

async function runWithTimeout<T>(
  run: () => Promise<T> | T,
  timeoutMs: number,
  requestId: string,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(timeoutError(timeoutMs, requestId)), timeoutMs);
  });
  // Calling inside the promise chain turns a synchronous throw into a rejection.
  const running = Promise.resolve().then(run);
  try {
    return await Promise.race([running, timedOut]);
  } catch (error) {
    // A refusal by the Lambda service (a throttle) is not a function error: Step Functions names it Lambda.<Exception>.
    throw error instanceof LambdaFunctionError || error instanceof LambdaServiceError ? error : new LambdaFunctionError(toErrorPayload(error));
  } finally {
    clearTimeout(timer);
    // The abandoned handler may still reject later: keep that from becoming
    // an unhandled rejection that kills the process.
    running.catch(() => undefined);
  }
}

function timeoutError(timeoutMs: number, requestId: string): LambdaFunctionError {
  const seconds = (timeoutMs / 1000).toFixed(2);
  return new LambdaFunctionError({
    errorType: LAMBDA_TIMEOUT_ERROR_TYPE,
    errorMessage: `RequestId: ${requestId} Error: Task timed out after ${seconds} seconds`,
  });
}

/** Serializes a thrown value the way the Node.js Lambda runtime does. */
export function toErrorPayload(error: unknown): LambdaErrorPayload {
  if (error instanceof Error) {
    return {
      errorType: error.name,
      errorMessage: error.message,
      trace: (error.stack ?? `${error.name}: ${error.message}`).split("\n"),
    };
  }
  return { errorType: typeof error, errorMessage: String(error), trace: [] };
}

function logStreamName(): string {
  const day = new Date().toISOString().slice(0, 10).replaceAll("-", "/");
  return `${day}/[$LATEST]${randomBytes(16).toString("hex")}`;
}
