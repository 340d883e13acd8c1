/** Asynchronously invoked functions have chosen retries and a failure destination (issue 16). */
import { beforeAll, describe, expect, it } from "vitest";
import { ASYNC_INVOCATION, WS_FAILURE_MAX_RECEIVES } from "../../infra/async-invocations";
import { FUNCTION_SPECS } from "../../infra/functions";
import { synthesizeTemplate, type CfnTemplate } from "../../infra/synth";
import { logicalIdOfFunction, resourcesOfType } from "./helpers";

let template: CfnTemplate;
beforeAll(() => {
  template = synthesizeTemplate({ bundling: false });
});

describe("asynchronous invocations", () => {
  it("ws-api and the sweeper set their retry count; exhausted events go to WsMethodFailures (ws-api) and AsyncFailures (sweeper)", () => {
    const configs = resourcesOfType(template, "AWS::Lambda::EventInvokeConfig");
    const queueId = (name: string) => resourcesOfType(template, "AWS::SQS::Queue").find(([id]) => id.includes(name))?.[0];
    const destination: Record<string, string | undefined> = { "ws-api": queueId("WsMethodFailures"), sweeper: queueId("AsyncFailures") };
    for (const [key, settings] of Object.entries(ASYNC_INVOCATION)) {
      const fnId = logicalIdOfFunction(template, key);
      const config = configs.find(([, r]) => (r.Properties?.FunctionName as { Ref?: string })?.Ref === fnId);
      expect(config, key).toBeDefined();
      expect(destination[key], key).toBeDefined();
      expect(config![1].Properties).toMatchObject({
        MaximumRetryAttempts: settings.retryAttempts,
        MaximumEventAgeInSeconds: settings.maxEventAgeSeconds,
        DestinationConfig: { OnFailure: { Destination: { "Fn::GetAtt": [destination[key], "Arn"] } } },
      });
    }
  });

  it("ws-api consumes its own failure records (to answer the client); what it cannot answer moves to AsyncFailures", () => {
    const [[wsFailuresId, wsFailures]] = resourcesOfType(template, "AWS::SQS::Queue").filter(([id]) => id.includes("WsMethodFailures"));
    const asyncFailuresId = resourcesOfType(template, "AWS::SQS::Queue").find(([id]) => id.includes("AsyncFailures"))![0];
    expect(wsFailures.Properties?.RedrivePolicy).toEqual({ deadLetterTargetArn: { "Fn::GetAtt": [asyncFailuresId, "Arn"] }, maxReceiveCount: WS_FAILURE_MAX_RECEIVES });
    expect(wsFailures.Properties?.VisibilityTimeout).toBeGreaterThanOrEqual(FUNCTION_SPECS["ws-api"].timeoutSeconds);
    const mapping = resourcesOfType(template, "AWS::Lambda::EventSourceMapping").find(([, r]) => JSON.stringify(r.Properties?.EventSourceArn).includes(wsFailuresId));
    expect(mapping?.[1].Properties).toMatchObject({ FunctionName: { Ref: logicalIdOfFunction(template, "ws-api") }, FunctionResponseTypes: ["ReportBatchItemFailures"] });
  });
});
