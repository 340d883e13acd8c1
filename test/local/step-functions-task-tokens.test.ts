/**
 * `.waitForTaskToken` on the local Step Functions (aws-local-stepfunctions
 * 3.0.0 has no task tokens): the task invokes its function with
 * `$$.Task.Token` in the payload and waits, with no code running, for
 * SendTaskSuccess / SendTaskFailure, or a missed heartbeat. Driven with the
 * real SFN client.
 */
import {
  DescribeExecutionCommand,
  SendTaskFailureCommand,
  SendTaskHeartbeatCommand,
  SendTaskSuccessCommand,
  SFNClient,
  StartExecutionCommand,
} from "@aws-sdk/client-sfn";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLocalStepFunctions, type LocalStepFunctions } from "../../infra/local/step-functions";

const REGION = "us-east-1";
const ACCOUNT = "000000000000";
const PAUSE_FN = `arn:aws:lambda:${REGION}:${ACCOUNT}:function:pause`;

let sfn: LocalStepFunctions;
let client: SFNClient;
/** What the paused function received, by execution input `id`. */
const received = new Map<string, { token: string; id: string }>();
let counter = 0;

beforeAll(async () => {
  sfn = await startLocalStepFunctions({ port: 0, region: REGION, accountId: ACCOUNT });
  client = new SFNClient({ endpoint: sfn.endpoint, region: REGION, credentials: { accessKeyId: "local", secretAccessKey: "local" } });
});
afterAll(async () => {
  client.destroy();
  await sfn.close();
});

function pauseMachine(extra: Record<string, unknown> = {}): string {
  counter += 1;
  return sfn.register({
    name: `pause-${counter}`,
    definition: {
      StartAt: "Pause",
      States: {
        Pause: {
          Type: "Task",
          Resource: "arn:aws:states:::lambda:invoke.waitForTaskToken",
          Parameters: { FunctionName: PAUSE_FN, Payload: { "id.$": "$.id", "token.$": "$$.Task.Token" } },
          ResultPath: "$.answer",
          Catch: [{ ErrorEquals: ["States.ALL"], ResultPath: "$.failure", Next: "Failed" }],
          Next: "Done",
          ...extra,
        },
        Failed: { Type: "Pass", End: true },
        Done: { Type: "Succeed" },
      },
    },
    taskHandlers: {
      [PAUSE_FN]: async (event) => {
        const payload = event as { id: string; token: string };
        received.set(payload.id, payload);
        return { ignored: true };
      },
    },
  });
}

async function startPaused(machineArn: string): Promise<{ executionArn: string; token: string }> {
  const id = `e-${++counter}`;
  const { executionArn } = await client.send(new StartExecutionCommand({ stateMachineArn: machineArn, input: JSON.stringify({ id }) }));
  const token = await until(() => received.get(id)?.token);
  return { executionArn: executionArn!, token };
}

async function until<T>(read: () => T | undefined, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error("condition not reached");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function waitClosed(executionArn: string) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const described = await client.send(new DescribeExecutionCommand({ executionArn }));
    if (described.status !== "RUNNING") return described;
    if (Date.now() > deadline) throw new Error("still RUNNING");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("waitForTaskToken", () => {
  it("passes a real token to the function and waits: SendTaskSuccess's output is the task result", async () => {
    const { executionArn, token } = await startPaused(pauseMachine());
    expect(token).toMatch(/^local-task-token-[A-Za-z0-9_-]+\.[0-9a-f]{64}$/);
    // Paused: no code runs, the execution stays RUNNING until answered.
    expect((await client.send(new DescribeExecutionCommand({ executionArn }))).status).toBe("RUNNING");
    await client.send(new SendTaskSuccessCommand({ taskToken: token, output: JSON.stringify({ decision: "allow-once" }) }));
    const done = await waitClosed(executionArn);
    expect(done.status).toBe("SUCCEEDED");
    expect(JSON.parse(done.output!).answer).toEqual({ decision: "allow-once" });
  });

  it("SendTaskFailure fails the task with its error and cause (a Catch sees them)", async () => {
    const { executionArn, token } = await startPaused(pauseMachine());
    await client.send(new SendTaskFailureCommand({ taskToken: token, error: "ApprovalExpired", cause: "no answer" }));
    const done = await waitClosed(executionArn);
    expect(JSON.parse(done.output!).failure).toEqual({ Error: "ApprovalExpired", Cause: "no answer" });
  });

  it("answering a token twice is TaskTimedOut; an unknown token is InvalidToken; output must be JSON", async () => {
    const { executionArn, token } = await startPaused(pauseMachine());
    await expect(client.send(new SendTaskSuccessCommand({ taskToken: token, output: "not json" }))).rejects.toMatchObject({ name: "InvalidOutput" });
    await client.send(new SendTaskSuccessCommand({ taskToken: token, output: "{}" }));
    await expect(client.send(new SendTaskSuccessCommand({ taskToken: token, output: "{}" }))).rejects.toMatchObject({ name: "TaskTimedOut" });
    await expect(client.send(new SendTaskHeartbeatCommand({ taskToken: "local-task-token-nope" }))).rejects.toMatchObject({ name: "InvalidToken" });
    expect((await waitClosed(executionArn)).status).toBe("SUCCEEDED");
  });

  it("HeartbeatSeconds: heartbeats keep the task waiting; a missed one is States.HeartbeatTimeout", async () => {
    const { executionArn, token } = await startPaused(pauseMachine({ HeartbeatSeconds: 5 }));
    await client.send(new SendTaskHeartbeatCommand({ taskToken: token }));
    const done = await waitClosed(executionArn);
    expect(JSON.parse(done.output!).failure).toMatchObject({ Error: "States.HeartbeatTimeout" });
    await expect(client.send(new SendTaskSuccessCommand({ taskToken: token, output: "{}" }))).rejects.toMatchObject({ name: "TaskTimedOut" });
  });

  it("TimeoutSeconds ends the wait with States.Timeout", async () => {
    const { executionArn } = await startPaused(pauseMachine({ TimeoutSeconds: 1 }));
    const done = await waitClosed(executionArn);
    expect(JSON.parse(done.output!).failure).toMatchObject({ Error: "States.Timeout" });
  });
});
