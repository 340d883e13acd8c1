import { describe, expect, it } from "vitest";
import { CALL_LATENCIES, categoryOf, criticalChain, modelLatency } from "../../bench/latency-model";
import { observabilityCost, PLATFORM_LOG_BYTES_PER_INVOCATION, XRAY_DEFAULT_SAMPLING_AT_SCALE } from "../../bench/observability-cost";
import { PRICES } from "../../bench/prices";

describe("AWS latency model", () => {
  it("classifies the recorder's timeline entries by the AWS call they stand for", () => {
    expect(categoryOf("dynamodb:GetItem")).toBe("dynamodb");
    expect(categoryOf("sqs:SendMessage")).toBe("sqs-send");
    expect(categoryOf("sqs:ReceiveMessage")).toBe("sqs-receive");
    expect(categoryOf("sqs:DeleteMessage")).toBe("sqs-other");
    expect(categoryOf("states:StartExecution")).toBe("sfn-api");
    expect(categoryOf("state:Attempt")).toBe("state-transition");
    expect(categoryOf("lambda:attempt")).toBe("lambda-invoke");
    expect(categoryOf("execute-api:ManageConnections")).toBe("post-to-connection");
    expect(categoryOf("secretsmanager:GetSecretValue")).toBe("other");
  });

  it("sums per-call latencies over the mean critical path of the runs", async () => {
    // Prepare: two runs of points one after the other, 3 and 1 DynamoDB requests, one transition each
    const paths = [
      [{ at: 1, what: "dynamodb:GetItem" }, { at: 2, what: "dynamodb:PutItem" }, { at: 3, what: "dynamodb:Query" }, { at: 4, what: "state:Attempt" }],
      [{ at: 5, what: "dynamodb:GetItem" }, { at: 6, what: "state:Attempt" }],
    ];
    // Act
    const model = modelLatency(paths);
    // Assess
    const dynamo = model.rows.find((row) => row.category === "dynamodb")!;
    expect(dynamo.perRun).toBe(2);
    expect(dynamo.onPathPerRun).toBe(2);
    expect(dynamo.ms).toBe(2 * CALL_LATENCIES.dynamodb.ms);
    expect(model.modelledMs).toBe(2 * CALL_LATENCIES.dynamodb.ms + CALL_LATENCIES["state-transition"].ms);
    expect(model.serialMs).toBe(model.modelledMs);
    expect(model.runs).toBe(2);
  });

  it("counts calls in flight together once: the critical path is the longest chain of calls that followed each other", () => {
    // Prepare: a read, then two writes side by side, then a post after both; a post that overlaps the
    // last write runs beside the chain (a background fan-out) and is not on it.
    const path = [
      { startedAt: 0, at: 2, what: "dynamodb:GetItem" },
      { startedAt: 3, at: 6, what: "dynamodb:PutItem" },
      { startedAt: 3, at: 5, what: "dynamodb:UpdateItem" },
      { startedAt: 5.5, at: 9, what: "execute-api:ManageConnections" },
      { startedAt: 7, at: 8, what: "execute-api:ManageConnections" },
    ];
    // Act
    const model = modelLatency([path]);
    const chain = criticalChain(path);
    // Assess: read -> one of the writes -> the later post
    expect(chain.map((node) => node.category)).toEqual(["dynamodb", "dynamodb", "post-to-connection"]);
    expect(model.modelledMs).toBe(2 * CALL_LATENCIES.dynamodb.ms + CALL_LATENCIES["post-to-connection"].ms);
    expect(model.serialMs).toBe(3 * CALL_LATENCIES.dynamodb.ms + 2 * CALL_LATENCIES["post-to-connection"].ms);
    const dynamo = model.rows.find((row) => row.category === "dynamodb")!;
    expect([dynamo.perRun, dynamo.onPathPerRun]).toEqual([3, 2]);
  });

  it("chains a call that started exactly when another finished, and counts every point event in turn, even one inside a call", () => {
    // The local engine enters the first state inside the StartExecution that starts it: still a transition of its own.
    const path = [
      { startedAt: 0, at: 2, what: "dynamodb:GetItem" },
      { startedAt: 2, at: 4, what: "states:StartExecution" },
      { at: 3, what: "state:Attempt" },
      { at: 4, what: "lambda:dispatcher" },
    ];
    expect(criticalChain(path).map((node) => node.category)).toEqual(["dynamodb", "sfn-api", "state-transition", "lambda-invoke"]);
    expect(modelLatency([path]).modelledMs).toBe(
      CALL_LATENCIES.dynamodb.ms + CALL_LATENCIES["sfn-api"].ms + CALL_LATENCIES["state-transition"].ms + CALL_LATENCIES["lambda-invoke"].ms,
    );
  });

  it("cites a source for every per-call latency", () => {
    for (const latency of Object.values(CALL_LATENCIES)) {
      expect(latency.url).toMatch(/^https:\/\//);
      expect(latency.ms).toBeGreaterThan(0);
    }
  });
});

describe("observability cost", () => {
  it("prices measured function log bytes plus modelled platform lines, and X-Ray traces per invocation", () => {
    const cost = observabilityCost({ functionLogBytes: 2 ** 20, invocations: 4, apiRequests: 1 }, PRICES);
    expect(cost.logBytes.platform).toBe(4 * PLATFORM_LOG_BYTES_PER_INVOCATION);
    expect(cost.logBytes.total).toBe(2 ** 20 + cost.logBytes.platform + cost.logBytes.accessLogs);
    expect(cost.logsDollars).toBeCloseTo((cost.logBytes.total / 2 ** 30) * 0.5, 12);
    expect(cost.tracesPerRun).toBe(4);
    expect(cost.xrayDollarsAllSampled).toBeCloseTo(4 * 5e-6, 12);
    expect(cost.xrayDollarsDefaultSampling).toBeCloseTo(cost.xrayDollarsAllSampled * XRAY_DEFAULT_SAMPLING_AT_SCALE, 12);
  });
});
