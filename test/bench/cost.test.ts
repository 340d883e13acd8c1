import { describe, expect, it } from "vitest";
import { configuredMemory, costOfRun, costPerModelSecond, gbSeconds, scaleBreakdown, usagePerRun, type RunUsage } from "../../bench/cost";
import { PRICES } from "../../bench/prices";
import type { WindowUsage } from "../../bench/recorder";
import { emptyTally } from "../../shared/aws/metering";

const tally = (fields: Partial<ReturnType<typeof emptyTally>>) => ({ ...emptyTally(), ...fields });

describe("cost arithmetic", () => {
  it("prices one run service by service from counted usage", () => {
    // Prepare: 1 s of the 1024 MB attempt + 100 ms of a 512 MB function, 5 transitions, ...
    const usage: RunUsage = {
      lambda: { attempt: { invocations: 1, billedMs: 1000 }, dispatcher: { invocations: 1, billedMs: 100 } },
      stateTransitions: 5,
      dynamoReadUnits: 40,
      dynamoWriteUnits: 20,
      sqsRequests: 3,
      webSocketMessages: 8,
      webSocketConnectionMinutes: 0.5,
    };
    // Act
    const cost = costOfRun(usage, { attempt: 1024, dispatcher: 512 }, PRICES);
    // Assess
    expect(cost.lambdaRequests).toBeCloseTo(2 * 0.2e-6, 15);
    expect(cost.lambdaDuration).toBeCloseTo((1 + 0.05) * 0.0000133334, 15);
    expect(cost.stepFunctions).toBeCloseTo(5 * 0.000025, 15);
    expect(cost.dynamodb).toBeCloseTo(40 * 0.125e-6 + 20 * 0.625e-6, 15);
    expect(cost.sqs).toBeCloseTo(3 * 0.5e-6, 15);
    expect(cost.apiGateway).toBeCloseTo(8 * 1e-6 + 0.5 * 0.25e-6, 15);
    const parts = cost.lambdaRequests + cost.lambdaDuration + cost.stepFunctions + cost.dynamodb + cost.sqs + cost.apiGateway;
    expect(cost.total).toBeCloseTo(parts, 15);
    expect(scaleBreakdown(cost, 1000).total).toBeCloseTo(parts * 1000, 12);
  });

  it("refuses to price a function whose memory is unknown", () => {
    const usage: RunUsage = { lambda: { decide: { invocations: 1, billedMs: 1 } }, stateTransitions: 0, dynamoReadUnits: 0, dynamoWriteUnits: 0, sqsRequests: 0, webSocketMessages: 0, webSocketConnectionMinutes: 0 };
    expect(() => costOfRun(usage, {}, PRICES)).toThrow(/no configured memory for function decide/);
  });

  it("turns GB-seconds from billed milliseconds and configured memory", () => {
    expect(gbSeconds(1000, 1024)).toBe(1);
    expect(gbSeconds(250, 512)).toBe(0.125);
    expect(configuredMemory().attempt).toBe(1024);
    expect(costPerModelSecond({ attempt: 1024 }, PRICES)).toBeCloseTo(0.0000133334, 15);
  });

  it("divides a window of K runs into one average run and leaves idle polling out", () => {
    const window: WindowUsage = {
      sdk: {
        "dynamodb:GetItem": tally({ calls: 6, readUnits: 6, billedRequests: 6 }),
        "dynamodb:PutItem": tally({ calls: 4, writeUnits: 5, billedRequests: 4 }),
        "dynamodb:UpdateItem": tally({ calls: 2, errors: 1, conditionFailures: 1, writeUnits: 2, billedRequests: 2 }),
        "sqs:SendMessage": tally({ calls: 2, billedRequests: 2 }),
        "sqs:ReceiveMessage": tally({ calls: 10, billedRequests: 10, emptyResults: 8 }),
        "apigw-management:PostToConnection": tally({ calls: 12, billedRequests: 14 }),
      },
      lambda: { attempt: { invocations: 2, billedMs: 300 } },
      stateTransitions: 10,
      transitionsByState: {},
      executionsClosed: 2,
      overTimeout: {},
      logs: {},
    };
    const usage = usagePerRun(window, 2, { inboundMessages: 2, connectionMinutes: 0.1 });
    expect(usage).toEqual({
      lambda: { attempt: { invocations: 1, billedMs: 150 } },
      stateTransitions: 5,
      dynamoReadUnits: 3,
      dynamoWriteUnits: 3.5,
      sqsRequests: 2, // 2 sends + 2 non-empty receives, over 2 runs
      webSocketMessages: 8, // 14 billed posts + 2 inbound frames, over 2 runs
      webSocketConnectionMinutes: 0.05,
    });
    expect(() => usagePerRun(window, 0, { inboundMessages: 0, connectionMinutes: 0 })).toThrow();
  });
});
