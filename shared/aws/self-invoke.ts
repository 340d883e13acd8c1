import type { LambdaClient } from "@aws-sdk/client-lambda";
import type { RuntimeConfig } from "../config/runtime";

/** Runs a follow-up step of this function after the current invocation returns. */
export type AsyncSelfInvoker = (event: Record<string, unknown>) => Promise<void>;

/**
 * In Lambda: an asynchronous `Invoke` (InvocationType Event) of this same
 * function, which returns as soon as Lambda has queued the event. Used by
 * $connect, which cannot post to its connection before it returns. Undefined
 * outside Lambda: the caller then runs the step in-process, which works in
 * unit tests that call the handler directly (the local stack gives every
 * function AWS_LAMBDA_FUNCTION_NAME and a Lambda Invoke API, like AWS).
 */
export function createAsyncSelfInvoker(runtime: RuntimeConfig): AsyncSelfInvoker | undefined {
  if (!runtime.selfFunctionName) return undefined;
  // The Lambda client is imported on the first $connect: a lazy chunk, not part of ws-api's import (issue 15).
  let client: LambdaClient | undefined;
  const functionName = runtime.selfFunctionName;
  return async (event) => {
    const { InvokeCommand, LambdaClient } = await import("@aws-sdk/client-lambda");
    client ??= new LambdaClient({
      region: runtime.region,
      endpoint: runtime.endpoints.lambda,
      ...(runtime.credentials ? { credentials: runtime.credentials } : {}),
    });
    await client.send(
      new InvokeCommand({ FunctionName: functionName, InvocationType: "Event", Payload: Buffer.from(JSON.stringify(event), "utf8") }),
    );
  };
}
