/**
 * The Lambda Invoke API on the edge (`POST /2015-03-31/functions/{name}/invocations`):
 * RequestResponse answers the payload (a function error with
 * `X-Amz-Function-Error: Unhandled`, as Lambda does); Event answers 202 at
 * once and runs the event with the function's async retry settings (retries
 * after a function error; AWS waits about 1 then 2 minutes between them,
 * locally `retryDelayMs`).
 */
import type { LocalServiceHandler, LocalServiceResponse } from "../aws-edge";
import { LambdaFunctionError, LambdaServiceError } from "../lambda-context";
import type { DeployedFunction } from "./deploy";

export interface LambdaApiOptions {
  lookup(nameOrArn: string): DeployedFunction | undefined;
  retryDelayMs: number;
  track(work: Promise<unknown>): void;
  /**
   * Runs one invocation of `fn` with `payload` (default: its pool): the stack
   * wraps it in the same observer as every trigger's invocations, so an
   * invocation through this API (ws-api's post-connect step) is counted too.
   */
  invoke?(fn: DeployedFunction, payload: string): Promise<string>;
  /** Retries exhausted: the function, the event, the last error (the stack sends it to the OnFailure destination). */
  onAsyncFailure?(fn: DeployedFunction, payload: string, error: unknown, attempts: number): void;
}

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
      return error(name === "RequestEntityTooLargeException" ? 413 : 500, name, (failure as Error).message);
    }
  };
}

async function invokeWithRetries(fn: DeployedFunction, payload: string, invoke: (fn: DeployedFunction, payload: string) => Promise<string>, options: LambdaApiOptions): Promise<void> {
  for (let attempt = 0; attempt <= fn.maxRetryAttempts; attempt += 1) {
    try {
      await invoke(fn, payload);
      return;
    } catch (failure) {
      if (attempt === fn.maxRetryAttempts) options.onAsyncFailure?.(fn, payload, failure, attempt + 1);
      else await new Promise((resolve) => setTimeout(resolve, options.retryDelayMs));
    }
  }
}

function error(statusCode: number, type: string, message: string): LocalServiceResponse {
  return { statusCode, headers: { "content-type": "application/json", "x-amzn-errortype": type }, body: JSON.stringify({ Type: "User", message }) };
}
