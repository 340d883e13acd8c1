import {
  DescribeExecutionCommand,
  type DescribeExecutionCommandOutput,
  ListExecutionsCommand,
  SFNClient,
  StartExecutionCommand,
  StopExecutionCommand,
} from "@aws-sdk/client-sfn";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  type LocalExecutionEvent,
  type LocalStepFunctions,
  type TaskHandler,
  startLocalStepFunctions,
} from "../../infra/local/step-functions";

const REGION = "us-east-1";
const ACCOUNT = "000000000000";
const fnArn = (name: string) => `arn:aws:lambda:${REGION}:${ACCOUNT}:function:${name}`;
const STEP = fnArn("step");

let sfn: LocalStepFunctions;
let client: SFNClient;
const events: LocalExecutionEvent[] = [];
let machineCounter = 0;

beforeAll(async () => {
  sfn = await startLocalStepFunctions({
    port: 0,
    region: REGION,
    accountId: ACCOUNT,
    onExecutionEvent: (event) => events.push(event),
  });
  client = new SFNClient({
    endpoint: sfn.endpoint,
    region: REGION,
    credentials: { accessKeyId: "local", secretAccessKey: "local" },
  });
});

afterEach(async () => {
  await sfn.waitForIdle();
});

afterAll(async () => {
  client.destroy();
  await sfn.close();
});

/** Registers a one-off machine so that tests never share execution names. */
function register(definition: object, taskHandlers: Record<string, TaskHandler> = {}, taskTimeoutsMs?: Record<string, number>) {
  machineCounter += 1;
  return sfn.register({ name: `machine-${machineCounter}`, definition, taskHandlers, taskTimeoutsMs });
}

function singleTask(extra: object = {}): object {
  return { StartAt: "Step", States: { Step: { Type: "Task", Resource: STEP, End: true, ...extra } } };
}

async function start(stateMachineArn: string, input: unknown = {}, name?: string) {
  return client.send(new StartExecutionCommand({ stateMachineArn, input: JSON.stringify(input), name }));
}

async function describeExecution(executionArn: string) {
  return client.send(new DescribeExecutionCommand({ executionArn }));
}

async function waitUntilClosed(executionArn: string, timeoutMs = 15_000): Promise<DescribeExecutionCommandOutput> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const described = await describeExecution(executionArn);
    if (described.status !== "RUNNING") return described;
    if (Date.now() > deadline) throw new Error(`execution still RUNNING after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

class RunBusyError extends Error {
  constructor(message = "the session lane is busy") {
    super(message);
    this.name = "RunBusyError";
  }
}

describe("local Step Functions API (real SFNClient)", () => {
  it("starts, describes and stops an execution", async () => {
    // Prepare
    const arn = register({ StartAt: "Park", States: { Park: { Type: "Wait", Seconds: 30, End: true } } });

    // Act
    const started = await start(arn, { runId: "r1" }, "run-1");
    const running = await describeExecution(started.executionArn!);
    const stopped = await client.send(
      new StopExecutionCommand({ executionArn: started.executionArn, error: "Run.Aborted", cause: "user abort" }),
    );
    const closed = await describeExecution(started.executionArn!);

    // Assess
    expect(started.executionArn).toBe(`arn:aws:states:${REGION}:${ACCOUNT}:execution:${arn.split(":").pop()}:run-1`);
    expect(started.startDate).toBeInstanceOf(Date);
    expect(running).toMatchObject({ status: "RUNNING", name: "run-1", input: '{"runId":"r1"}', stateMachineArn: arn });
    expect(running.stopDate).toBeUndefined();
    expect(stopped.stopDate).toBeInstanceOf(Date);
    expect(closed).toMatchObject({ status: "ABORTED", error: "Run.Aborted", cause: "user abort" });
    expect(closed.stopDate!.getTime()).toBeGreaterThanOrEqual(closed.startDate!.getTime());
  });

  it("lists executions by state machine and status", async () => {
    // Prepare
    const arn = register({ StartAt: "Done", States: { Done: { Type: "Pass", End: true } } });
    const parked = register({ StartAt: "Park", States: { Park: { Type: "Wait", Seconds: 30, End: true } } });
    const done = await start(arn);
    await waitUntilClosed(done.executionArn!);
    const running = await start(parked);

    // Act
    const succeeded = await client.send(new ListExecutionsCommand({ stateMachineArn: arn, statusFilter: "SUCCEEDED" }));
    const runningList = await client.send(new ListExecutionsCommand({ stateMachineArn: parked, statusFilter: "RUNNING" }));
    await client.send(new StopExecutionCommand({ executionArn: running.executionArn }));

    // Assess
    expect(succeeded.executions?.map((e) => e.executionArn)).toEqual([done.executionArn]);
    expect(runningList.executions?.map((e) => e.executionArn)).toEqual([running.executionArn]);
  });

  it("is idempotent for the same name and input while running, and refuses anything else", async () => {
    // Prepare
    const arn = register({ StartAt: "Park", States: { Park: { Type: "Wait", Seconds: 30, End: true } } });
    const first = await start(arn, { runId: "r2" }, "run-2");

    // Act
    const again = await start(arn, { runId: "r2" }, "run-2");
    const otherInput = start(arn, { runId: "other" }, "run-2");
    await expect(otherInput).rejects.toMatchObject({ name: "ExecutionAlreadyExists" });
    await client.send(new StopExecutionCommand({ executionArn: first.executionArn }));
    const afterClose = start(arn, { runId: "r2" }, "run-2");

    // Assess
    expect(again.executionArn).toBe(first.executionArn);
    expect(again.startDate!.getTime()).toBe(first.startDate!.getTime());
    await expect(afterClose).rejects.toMatchObject({ name: "ExecutionAlreadyExists" });
  });

  it("rejects bad names, inputs and ARNs with AWS's error names", async () => {
    // Prepare
    const arn = register({ StartAt: "Done", States: { Done: { Type: "Pass", End: true } } });
    const unknownMachine = `arn:aws:states:${REGION}:${ACCOUNT}:stateMachine:nope`;
    const unknownExecution = `arn:aws:states:${REGION}:${ACCOUNT}:execution:nope:nope`;

    // Act + Assess
    await expect(start(arn, {}, "has space")).rejects.toMatchObject({ name: "InvalidName" });
    await expect(start(arn, {}, "x".repeat(81))).rejects.toMatchObject({ name: "InvalidName" });
    await expect(
      client.send(new StartExecutionCommand({ stateMachineArn: arn, input: "{not json" })),
    ).rejects.toMatchObject({ name: "InvalidExecutionInput" });
    await expect(start(arn, { blob: "x".repeat(256 * 1024) })).rejects.toMatchObject({ name: "InvalidExecutionInput" });
    await expect(start(unknownMachine)).rejects.toMatchObject({ name: "StateMachineDoesNotExist" });
    await expect(describeExecution(unknownExecution)).rejects.toMatchObject({ name: "ExecutionDoesNotExist" });
    await expect(describeExecution("not-an-arn")).rejects.toMatchObject({ name: "InvalidArn" });
  });

  it("names an execution with a UUID when no name is given", async () => {
    // Prepare
    const arn = register({ StartAt: "Done", States: { Done: { Type: "Pass", End: true } } });

    // Act
    const started = await client.send(new StartExecutionCommand({ stateMachineArn: arn }));
    const closed = await waitUntilClosed(started.executionArn!);

    // Assess
    expect(closed.name).toMatch(/^[0-9a-f-]{36}$/);
    expect(closed).toMatchObject({ status: "SUCCEEDED", input: "{}", output: "{}" });
  });
});

// Each test registers its own machine, so executions run concurrently.
describe.concurrent("local Step Functions executions", () => {
  it("runs a Choice loop whose Wait (SecondsPath) really waits", async () => {
    // Prepare
    const increment: TaskHandler = async (input) => {
      const state = input as { count: number; waitSeconds: number };
      return { ...state, count: state.count + 1 };
    };
    const arn = register(
      {
        StartAt: "Increment",
        States: {
          Increment: { Type: "Task", Resource: STEP, Next: "Decide" },
          Decide: {
            Type: "Choice",
            Choices: [{ Variable: "$.count", NumericLessThan: 2, Next: "Pause" }],
            Default: "Done",
          },
          Pause: { Type: "Wait", SecondsPath: "$.waitSeconds", Next: "Increment" },
          Done: { Type: "Succeed" },
        },
      },
      { [STEP]: increment },
    );
    const startedAt = Date.now();

    // Act
    const started = await start(arn, { count: 0, waitSeconds: 1 });
    const closed = await waitUntilClosed(started.executionArn!);

    // Assess
    expect(closed.status).toBe("SUCCEEDED");
    expect(JSON.parse(closed.output!)).toEqual({ count: 2, waitSeconds: 1 });
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(950);
  });

  it("retries a custom error name and succeeds on the next attempt", async () => {
    // Prepare
    let calls = 0;
    const flaky: TaskHandler = async () => {
      calls += 1;
      if (calls === 1) throw new RunBusyError();
      return { ok: true };
    };
    const arn = register(
      singleTask({ Retry: [{ ErrorEquals: ["RunBusyError"], IntervalSeconds: 1, MaxAttempts: 1 }] }),
      { [STEP]: flaky },
    );

    // Act
    const closed = await waitUntilClosed((await start(arn)).executionArn!);

    // Assess
    expect(closed.status).toBe("SUCCEEDED");
    expect(calls).toBe(2);
  });

  it.each([["RunBusyError"], ["States.ALL"], ["States.TaskFailed"]])(
    "catches a thrown RunBusyError with ErrorEquals %s and hands {Error, Cause} to ResultPath",
    async (errorEquals) => {
      // Prepare
      const busy: TaskHandler = async () => {
        throw new RunBusyError("lane held by run-0");
      };
      const arn = register(
        {
          StartAt: "Step",
          States: {
            Step: {
              Type: "Task",
              Resource: STEP,
              Catch: [{ ErrorEquals: [errorEquals], ResultPath: "$.failure", Next: "Recovered" }],
              End: true,
            },
            Recovered: { Type: "Pass", End: true },
          },
        },
        { [STEP]: busy },
      );

      // Act
      const closed = await waitUntilClosed((await start(arn, { runId: "r3" })).executionArn!);

      // Assess
      expect(closed.status).toBe("SUCCEEDED");
      const output = JSON.parse(closed.output!);
      expect(output.runId).toBe("r3");
      expect(output.failure.Error).toBe("RunBusyError");
      const cause = JSON.parse(output.failure.Cause);
      expect(cause).toMatchObject({ errorType: "RunBusyError", errorMessage: "lane held by run-0" });
      expect(cause.trace[0]).toBe("RunBusyError: lane held by run-0");
    },
  );

  it("fails the execution with the error name and Lambda's Cause when nothing catches it", async () => {
    // Prepare
    const arn = register(singleTask(), {
      [STEP]: async () => {
        throw new RunBusyError();
      },
    });

    // Act
    const closed = await waitUntilClosed((await start(arn)).executionArn!);

    // Assess
    expect(closed).toMatchObject({ status: "FAILED", error: "RunBusyError" });
    expect(JSON.parse(closed.cause!)).toMatchObject({ errorType: "RunBusyError" });
  });

  it("times a Task out with States.Timeout (TimeoutSeconds), catchable", async () => {
    // Prepare
    const slow: TaskHandler = () => new Promise((resolve) => setTimeout(() => resolve({}), 1_500));
    const arn = register(
      {
        StartAt: "Step",
        States: {
          Step: {
            Type: "Task",
            Resource: STEP,
            TimeoutSeconds: 1,
            Catch: [{ ErrorEquals: ["States.Timeout"], ResultPath: "$.failure", Next: "TimedOut" }],
            End: true,
          },
          TimedOut: { Type: "Pass", End: true },
        },
      },
      { [STEP]: slow },
      { [STEP]: 10_000 },
    );

    // Act
    const closed = await waitUntilClosed((await start(arn)).executionArn!);

    // Assess
    expect(closed.status).toBe("SUCCEEDED");
    expect(JSON.parse(closed.output!).failure.Error).toBe("States.Timeout");
  });

  it("reports a Lambda function timeout as Sandbox.Timedout, matched by States.TaskFailed", async () => {
    // Prepare
    const slow: TaskHandler = () => new Promise((resolve) => setTimeout(() => resolve({}), 1_000));
    const arn = register(
      {
        StartAt: "Step",
        States: {
          Step: {
            Type: "Task",
            Resource: STEP,
            Catch: [{ ErrorEquals: ["States.TaskFailed"], ResultPath: "$.failure", Next: "Caught" }],
            End: true,
          },
          Caught: { Type: "Pass", End: true },
        },
      },
      { [STEP]: slow },
      { [STEP]: 100 },
    );

    // Act
    const closed = await waitUntilClosed((await start(arn)).executionArn!);

    // Assess
    const failure = JSON.parse(closed.output!).failure;
    expect(failure.Error).toBe("Sandbox.Timedout");
    expect(JSON.parse(failure.Cause).errorMessage).toMatch(/Task timed out after 0\.10 seconds$/);
  });

  it("fails with States.DataLimitExceeded when a task returns more than 256 KiB, even under States.ALL", async () => {
    // Prepare
    const big: TaskHandler = async () => ({ blob: "x".repeat(256 * 1024) });
    const arn = register(
      {
        StartAt: "Step",
        States: {
          Step: {
            Type: "Task",
            Resource: STEP,
            Retry: [{ ErrorEquals: ["States.ALL"], MaxAttempts: 2 }],
            Catch: [{ ErrorEquals: ["States.ALL"], Next: "Caught" }],
            End: true,
          },
          Caught: { Type: "Pass", End: true },
        },
      },
      { [STEP]: big },
    );

    // Act
    const closed = await waitUntilClosed((await start(arn)).executionArn!);

    // Assess
    expect(closed).toMatchObject({ status: "FAILED", error: "States.DataLimitExceeded" });
  });

  it("fails with States.DataLimitExceeded when a Pass state's output grows past 256 KiB", async () => {
    // Prepare
    const arn = register({
      StartAt: "Grow",
      States: {
        Grow: { Type: "Pass", Result: "y".repeat(200 * 1024), ResultPath: "$.second", Next: "Park" },
        Park: { Type: "Wait", Seconds: 5, End: true },
      },
    });

    // Act
    const closed = await waitUntilClosed((await start(arn, { first: "x".repeat(100 * 1024) })).executionArn!);

    // Assess
    expect(closed).toMatchObject({ status: "FAILED", error: "States.DataLimitExceeded" });
  });

  it("serves the lambda:invoke integration and wraps the result like AWS", async () => {
    // Prepare
    const echo: TaskHandler = async (input) => ({ echoed: input });
    const arn = register(
      {
        StartAt: "Invoke",
        States: {
          Invoke: {
            Type: "Task",
            Resource: "arn:aws:states:::lambda:invoke",
            Parameters: { FunctionName: `${fnArn("echo")}:$LATEST`, "Payload.$": "$" },
            End: true,
          },
        },
      },
      { [fnArn("echo")]: echo },
    );

    // Act
    const closed = await waitUntilClosed((await start(arn, { runId: "r4" })).executionArn!);

    // Assess
    const output = JSON.parse(closed.output!);
    expect(output).toMatchObject({ StatusCode: 200, ExecutedVersion: "$LATEST", Payload: { echoed: { runId: "r4" } } });
    expect(output.SdkHttpMetadata.HttpStatusCode).toBe(200);
  });

  it("gives handlers a JSON copy of the input, a Lambda context and $$.Execution", async () => {
    // Prepare
    let seen: { input: unknown; functionName: string; remaining: number } | undefined;
    const inspect: TaskHandler = async (input, context) => {
      seen = { input, functionName: context.functionName, remaining: context.getRemainingTimeInMillis() };
      return { at: new Date(0) };
    };
    const arn = register(
      singleTask({ Parameters: { "executionId.$": "$$.Execution.Id", "runId.$": "$.runId" } }),
      { [STEP]: inspect },
      { [STEP]: 5_000 },
    );

    // Act
    const started = await start(arn, { runId: "r5" });
    const closed = await waitUntilClosed(started.executionArn!);

    // Assess
    expect(seen?.input).toEqual({ executionId: started.executionArn, runId: "r5" });
    expect(seen?.functionName).toBe("step");
    expect(seen?.remaining).toBeGreaterThan(4_000);
    expect(JSON.parse(closed.output!)).toEqual({ at: "1970-01-01T00:00:00.000Z" });
  });

  it("ends FAILED (States.Runtime), not hung, when the definition breaks at run time", async () => {
    // Prepare
    const arn = register({
      StartAt: "Pause",
      States: { Pause: { Type: "Wait", SecondsPath: "$.missing", End: true } },
    });

    // Act
    const closed = await waitUntilClosed((await start(arn)).executionArn!);

    // Assess
    expect(closed).toMatchObject({ status: "FAILED", error: "States.Runtime" });
  });

  it("refuses to register a machine whose Task has no handler", () => {
    // Act + Assess
    expect(() => register(singleTask(), {})).toThrow(/no local handler/);
  });

  it("reports state events and the closing of each execution", async () => {
    // Prepare
    const arn = register({ StartAt: "Done", States: { Done: { Type: "Pass", End: true } } });

    // Act
    const started = await start(arn);
    await waitUntilClosed(started.executionArn!);
    await sfn.waitForIdle();

    // Assess
    const mine = events.filter(
      (e) => (e.kind === "closed" ? e.execution.executionArn : e.executionArn) === started.executionArn,
    );
    expect(mine.some((e) => e.kind === "state" && e.event.type === "StateExited")).toBe(true);
    expect(mine.at(-1)).toMatchObject({ kind: "closed", execution: { status: "SUCCEEDED" } });
  });
});
