/**
 * The Lambda Invoke API on the edge (`POST /2015-03-31/functions/{name}/invocations`):
 * RequestResponse answers the payload (a function error with
 * `X-Amz-Function-Error: Unhandled`, as Lambda does); Event answers 202 at
 * once and runs the event as Lambda's async queue does (api-gateway/async-invoke.ts:
 * retries after a function error up to the function's retry settings, a
 * throttled invocation put back without using one; AWS waits about 1 then
 * 2 minutes between retries, locally `retryDelayMs`). Every invocation goes
 * through the stack's `invoke`: its fault plan and its observer.
 */
import { invokeAsyncWithRetries } from "../api-gateway/async-invoke";
import type { InvocationOutcome } from "../api-gateway/invoke";
import type { LocalServiceHandler, LocalServiceResponse } from "../aws-edge";
import { LambdaFunctionError, LambdaServiceError } from "../lambda-context";
import type { DeployedFunction } from "./deploy";

export interface LambdaApiOptions {
  lookup(nameOrArn: string): DeployedFunction | undefined;
  retryDelayMs: number;
  track(work: Promise<unknown>): void;
  /**
   * Runs one invocation of `fn` with `payload` (default: its pool): the stack
   * wraps it in what every trigger's invocations go through (its fault plan's
   * invoke faults, its observer), so an invocation through this API (ws-api's
   * post-connect step) can be refused or crashed by a fault test, and is counted.
   */
  invoke?(fn: DeployedFunction, payload: string): Promise<string>;
  /** Retries exhausted: the function, the event, the last error (the stack sends it to the OnFailure destination). */
  onAsyncFailure?(fn: DeployedFunction, payload: string, error: unknown, attempts: number): void;
}

/** Invoke's HTTP status per service error (Lambda API reference, Invoke: Errors). */
const SERVICE_ERROR_STATUS: Readonly<Record<string, number>> = { RequestEntityTooLargeException: 413, TooManyRequestsException: 429 };

const INVOKE_PATH = /^\/2015-03-31\/functions\/([^/]+)\/invocations/;

export function createLambdaApi(options: LambdaApiOptions): LocalServiceHandler {
  const invoke = options.invoke ?? ((fn: DeployedFunction, payload: string) => fn.pool.invokeJson(payload));
  return async (request): Promise<LocalServiceResponse> => {
    const match = INVOKE_PATH.exec(request.path);
    if (!match || request.method !== "POST") return error(404, "ResourceNotFoundException", `Unsupported local Lambda operation ${request.method} ${request.path}`);
    const name = decodeURIComponent(match[1]).split(":").filter((part) => part !== "$LATEST");
    const fn = options.lookup(name.length >= 7 ? name[6] : name[0]);
    if (!fn) return error(404, "ResourceNotFoundException", `Function not found: ${decodeURIComponent(match[1])}`);
    const payload = request.body.length > 0 ? request.body.toString("utf8") : "{}";
    if (request.headers["x-amz-invocation-type"] === "Event") {
      options.track(invokeWithRetries(fn, payload, invoke, options));
      return { statusCode: 202, headers: { "content-type": "application/json" }, body: "" };
    }
    try {
      const result = await invoke(fn, payload);
      return { statusCode: 200, headers: { "content-type": "application/json", "x-amz-executed-version": "$LATEST" }, body: result };
    } catch (failure) {
      if (failure instanceof LambdaFunctionError) {
        return { statusCode: 200, headers: { "content-type": "application/json", "x-amz-function-error": "Unhandled", "x-amz-executed-version": "$LATEST" }, body: JSON.stringify(failure.payload) };
      }
      const name = failure instanceof LambdaServiceError ? failure.name : "ServiceException";
      return error(SERVICE_ERROR_STATUS[name] ?? 500, name, (failure as Error).message);
    }
  };
}

/** Lambda's async queue, as for the asynchronous WebSocket routes: throttles go back to the queue, function errors use the retries. */
function invokeWithRetries(fn: DeployedFunction, payload: string, invoke: (fn: DeployedFunction, payload: string) => Promise<string>, options: LambdaApiOptions): Promise<void> {
  return invokeAsyncWithRetries(
    () => invoke(fn, payload).then(
      (value): InvocationOutcome<string> => ({ kind: "returned", value }),
      (error: unknown): InvocationOutcome<string> => ({ kind: "threw", error }),
    ),
    {
      maxRetryAttempts: fn.maxRetryAttempts,
      retryDelayMs: options.retryDelayMs,
      onRetriesExhausted: (error, attempts) => options.onAsyncFailure?.(fn, payload, error, attempts),
    },
  );
}

function error(statusCode: number, type: string, message: string): LocalServiceResponse {
  return { statusCode, headers: { "content-type": "application/json", "x-amzn-errortype": type }, body: JSON.stringify({ Type: "User", message }) };
}
