import { afterEach, describe, expect, it, vi } from "vitest";
import { LocalAuthorizer } from "../../infra/local/api-gateway/authorizer";
import { LambdaFunctionError, LAMBDA_TIMEOUT_ERROR_TYPE } from "../../infra/local/lambda-context";
import { barrier } from "../support/scripted-sse-server";

/**
 * The local API Gateway has no authorizer timer of its own (AWS's integration timeout does not apply to
 * authorizers): waiting for a free local sandbox or a cold start is not a failure, only the function's
 * own failure or Timeout (enforced by the sandbox pool) is a 500.
 */
const METHOD_ARN = "arn:aws:execute-api:us-east-1:000000000000:api/local/POST/v1/agent";
const allow = { principalId: "key_1", policyDocument: { Version: "2012-10-17", Statement: [{ Action: "execute-api:Invoke", Effect: "Allow", Resource: "*" }] } };
const request = { headers: { Authorization: "Bearer good" }, query: null, methodArn: METHOD_ARN, event: { type: "REQUEST" } };

afterEach(() => vi.useRealTimers());

describe("the local authorizer's wait", () => {
  it("answers an invocation that starts late (queued behind busy sandboxes, cold) with its policy, not a 500", async () => {
    vi.useFakeTimers();
    const started = barrier();
    const authorizer = new LocalAuthorizer({ identitySources: ["method.request.header.Authorization"], ttlSeconds: 0, invoke: async () => started.promise.then(() => allow) });
    const decision = authorizer.authorize(request);
    await vi.advanceTimersByTimeAsync(60_000); // a minute waiting for a sandbox on a loaded machine
    started.release();
    expect(await decision).toMatchObject({ kind: "allow", authorizer: { principalId: "key_1" } });
  });

  it("is a 500 when the function itself fails or times out, as in AWS", async () => {
    const timedOut = new LambdaFunctionError({ errorType: LAMBDA_TIMEOUT_ERROR_TYPE, errorMessage: "RequestId: r Error: Task timed out after 10.00 seconds" });
    const authorizer = new LocalAuthorizer({ identitySources: ["method.request.header.Authorization"], ttlSeconds: 300, invoke: async () => Promise.reject(timedOut) });
    expect(await authorizer.authorize(request)).toEqual({ kind: "deny", statusCode: 500, message: "Internal server error" });
  });
});
