import { createAsyncSelfInvoker } from "../../shared/aws/self-invoke";
import { lambdaEntry } from "../../shared/runtime/app-deps";
import { createWebSocketHandler } from "./app";

/**
 * Lambda entry: every route of the WebSocket API, plus the post-connect step
 * it invokes itself for (only this function bundles the Lambda client).
 */
export const handler = lambdaEntry((deps) => {
  const invokeSelfAsync = createAsyncSelfInvoker(deps.runtime);
  return createWebSocketHandler(invokeSelfAsync ? { ...deps, invokeSelfAsync } : deps);
});
