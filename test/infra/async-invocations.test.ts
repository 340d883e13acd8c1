/** Asynchronously invoked functions have chosen retries and a failure destination (issue 16). */
import { beforeAll, describe, expect, it } from "vitest";
import { ASYNC_INVOCATION } from "../../infra/async-invocations";
import { synthesizeTemplate, type CfnTemplate } from "../../infra/synth";
import { logicalIdOfFunction, resourcesOfType } from "./helpers";

let template: CfnTemplate;
beforeAll(() => {
  template = synthesizeTemplate({ bundling: false });
});

describe("asynchronous invocations", () => {
  it("ws-api and the sweeper set their retry count and send exhausted events to the AsyncFailures queue", () => {
    const configs = resourcesOfType(template, "AWS::Lambda::EventInvokeConfig");
    const queue = resourcesOfType(template, "AWS::SQS::Queue").find(([id]) => id.includes("AsyncFailures"));
    expect(queue).toBeDefined();
    for (const [key, settings] of Object.entries(ASYNC_INVOCATION)) {
      const fnId = logicalIdOfFunction(template, key);
      const config = configs.find(([, r]) => (r.Properties?.FunctionName as { Ref?: string })?.Ref === fnId);
      expect(config, key).toBeDefined();
      expect(config![1].Properties).toMatchObject({
        MaximumRetryAttempts: settings.retryAttempts,
        MaximumEventAgeInSeconds: settings.maxEventAgeSeconds,
        DestinationConfig: { OnFailure: { Destination: { "Fn::GetAtt": [queue![0], "Arn"] } } },
      });
    }
  });
});
