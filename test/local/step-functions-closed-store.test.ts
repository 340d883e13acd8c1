import { DescribeExecutionCommand, SFNClient, StartExecutionCommand } from "@aws-sdk/client-sfn";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLocalStepFunctions, type LocalStepFunctions } from "../../infra/local/step-functions";
import { ExecutionStore, type ExecutionRecord } from "../../infra/local/step-functions/executions";

const REGION = "us-east-1";
const ACCOUNT = "000000000000";
const STEP = `arn:aws:lambda:${REGION}:${ACCOUNT}:function:step`;

function running(i: number): ExecutionRecord {
  const input = JSON.stringify({ runId: `r${i}` });
  return { executionArn: `arn:aws:states:${REGION}:${ACCOUNT}:execution:m:e${i}`, stateMachineArn: `arn:aws:states:${REGION}:${ACCOUNT}:stateMachine:m`, name: `e${i}`, status: "RUNNING", startDate: new Date(i * 1000), input, inputValue: JSON.parse(input) };
}

/** The execution number in a record's name (`e7` -> 7). */
const i = (record: ExecutionRecord) => Number(record.name.slice(1));

describe("the closed-execution store", () => {
  it("keeps input and output for the newest closed executions only, a summary for older ones, and forgets past its bound", () => {
    // Prepare
    const store = new ExecutionStore(10, 3);
    const records = Array.from({ length: 12 }, (_, i) => running(i));

    // Act
    for (const record of records) {
      store.add(record);
      store.close(record, i(record) % 2 ? { status: "FAILED", error: "Boom", cause: `cause ${i(record)}` } : { status: "SUCCEEDED", output: `{"n":${i(record)}}` });
    }

    // Assess: 12 closed, the 2 oldest forgotten, 3 newest detailed
    expect(store.sizes()).toEqual({ records: 10, closed: 10, detailed: 3 });
    expect(store.find(records[0].executionArn)).toBeUndefined();
    expect(store.find(records[1].executionArn)).toBeUndefined();
    for (const record of records.slice(9)) {
      expect(store.find(record.executionArn)).toMatchObject({ input: record.input, inputValue: undefined });
    }
    expect(store.find(records[11].executionArn)?.error).toBe("Boom");
    expect(store.find(records[10].executionArn)?.output).toBe('{"n":10}');
    // Summarized: status, error and cause stay (the sweeper reads them), input and output are gone
    const summarized = store.find(records[3].executionArn);
    expect(summarized).toMatchObject({ status: "FAILED", error: "Boom", cause: "cause 3", name: "e3" });
    expect(summarized?.input).toBeUndefined();
    expect(store.find(records[4].executionArn)?.output).toBeUndefined();
    expect(store.find(records[4].executionArn)?.status).toBe("SUCCEEDED");
  });

  it("stays at its bound however many executions close", () => {
    // Prepare
    const store = new ExecutionStore(100, 5);

    // Act
    for (let n = 0; n < 1_000; n += 1) {
      const record = running(n);
      store.add(record);
      store.close(record, { status: "SUCCEEDED", output: "{}" });
    }

    // Assess
    expect(store.sizes()).toEqual({ records: 100, closed: 100, detailed: 5 });
    expect(store.isIdle()).toBe(true);
  });
});

describe("DescribeExecution of a summarized closed execution", () => {
  let sfn: LocalStepFunctions;
  let client: SFNClient;
  beforeAll(async () => {
    sfn = await startLocalStepFunctions({ port: 0, region: REGION, accountId: ACCOUNT, maxClosedExecutions: 10, maxDetailedClosedExecutions: 1 });
    client = new SFNClient({ endpoint: sfn.endpoint, region: REGION, credentials: { accessKeyId: "local", secretAccessKey: "local" } });
  });
  afterAll(async () => {
    client.destroy();
    await sfn.close();
  });

  it("answers its status without input or output (not included), while the newest keeps both; its name stays taken", async () => {
    // Prepare
    const stateMachineArn = sfn.register({ name: "closed-store", definition: { StartAt: "Step", States: { Step: { Type: "Task", Resource: STEP, End: true } } }, taskHandlers: { [STEP]: async (input) => ({ echoed: input }) } });

    // Act: two executions, one after the other
    const first = await client.send(new StartExecutionCommand({ stateMachineArn, name: "first", input: '{"n":1}' }));
    await sfn.waitForIdle();
    const second = await client.send(new StartExecutionCommand({ stateMachineArn, name: "second", input: '{"n":2}' }));
    await sfn.waitForIdle();
    const old = await client.send(new DescribeExecutionCommand({ executionArn: first.executionArn }));
    const newest = await client.send(new DescribeExecutionCommand({ executionArn: second.executionArn }));

    // Assess
    expect(old).toMatchObject({ status: "SUCCEEDED", name: "first", inputDetails: { included: false }, outputDetails: { included: false } });
    expect(old.input).toBeUndefined();
    expect(old.output).toBeUndefined();
    expect(newest).toMatchObject({ status: "SUCCEEDED", input: '{"n":2}', inputDetails: { included: true } });
    expect(JSON.parse(newest.output!)).toEqual({ echoed: { n: 2 } });
    await expect(client.send(new StartExecutionCommand({ stateMachineArn, name: "first", input: '{"n":1}' }))).rejects.toMatchObject({ name: "ExecutionAlreadyExists" });
  });
});
