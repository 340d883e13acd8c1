/**
 * Issue 6, "How to prove it", on the local stack: the dispatcher killed
 * between its writes (an injected fault) and redelivered still gives exactly
 * one execution per run; an execution stopped from outside hands its lane to
 * the next run within seconds; a run whose execution never started is
 * started by the sweeper.
 */
import { ListExecutionsCommand, SFNClient, StopExecutionCommand } from "@aws-sdk/client-sfn";
import type { SQSEvent } from "aws-lambda";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDispatcherHandler } from "../../functions/dispatcher/app";
import { createLambdaContext } from "../../infra/local/lambda-context";
import { startLocalStack, type LocalStack } from "../../infra/local/stack";
import { getLane } from "../../shared/aws/lanes";
import { getRun } from "../../shared/aws/runs";
import { getSession } from "../../shared/aws/sessions";
import { readTranscript } from "../../shared/aws/transcript";
import { loadAgentConfig } from "../../shared/config/config";
import { acceptRun } from "../../shared/intake/intake";
import { chat, FakeOpenAIServer } from "../support/fake-openai-server";
import { crashingDb, RecordingQueue } from "../lanes/support";
import { allEnded, postAgent } from "./lanes-support";

let stack: LocalStack;
let oai: FakeOpenAIServer;
let sfn: SFNClient;

beforeAll(async () => {
  oai = await FakeOpenAIServer.start();
  const config = loadAgentConfig({ OPENAI_API_KEY: "test", OPENAI_BASE_URL: oai.baseURL, MODEL: "openai/gpt-4o" });
  stack = await startLocalStack({ config, sweepIntervalMs: 0 });
  const { endpoints, region, credentials } = stack.deps.runtime;
  sfn = new SFNClient({ endpoint: endpoints.sfn, region, ...(credentials ? { credentials } : {}) });
}, 60_000);
afterAll(async () => {
  sfn?.destroy();
  await stack?.close();
  await oai?.close();
});

/** Accepted by intake, but its queue pointer held back: the test plays the delivery. */
async function acceptHeld(sessionKey: string, message: string) {
  const held = new RecordingQueue();
  const accepted = await acceptRun({ ...stack.deps, queue: held }, { sessionKey, message }, "rest");
  return { runId: accepted.runId, pointer: held.sent[0] };
}

function sqsEvent(runId: string, sessionKey: string, receiveCount = 1): SQSEvent {
  return {
    Records: [
      {
        messageId: `msg-${runId}-${receiveCount}`,
        receiptHandle: "local",
        body: JSON.stringify({ v: 1, runId }),
        attributes: {
          ApproximateReceiveCount: String(receiveCount), SentTimestamp: String(Date.now()), SenderId: "local",
          ApproximateFirstReceiveTimestamp: String(Date.now()), MessageGroupId: sessionKey, MessageDeduplicationId: runId, SequenceNumber: "1",
        },
        messageAttributes: {}, md5OfBody: "", eventSource: "aws:sqs", eventSourceARN: "arn:aws:sqs:us-east-1:000000000000:agent-runs.fifo", awsRegion: "us-east-1",
      },
    ],
  };
}

async function executionsNamed(name: string): Promise<number> {
  const out = await sfn.send(new ListExecutionsCommand({ stateMachineArn: stack.deps.runtime.stateMachineArn!, maxResults: 1000 }));
  return (out.executions ?? []).filter((e) => e.name === name).length;
}

describe("faults on the local stack", () => {
  it("the dispatcher killed before each of its writes, then redelivered: one execution per run", async () => {
    // How many writes does one admission make? (The second probe: the first also creates the global-lane item.)
    let writes = 0;
    for (const name of ["faults-probe-1", "faults-probe-2"]) {
      const probe = await acceptHeld(name, "probe");
      oai.enqueue(chat.text("probe done"));
      const counting = crashingDb(stack.deps.db, Number.POSITIVE_INFINITY);
      await createDispatcherHandler({ ...stack.deps, db: counting })(sqsEvent(probe.runId, name), createLambdaContext("dispatcher", 30_000));
      await allEnded(stack, [probe.runId]);
      writes = counting.writes();
    }
    expect(writes).toBeGreaterThanOrEqual(3);

    for (let k = 1; k <= writes; k += 1) {
      const sessionKey = `faults-crash-${k}`;
      oai.enqueue(chat.text(`answer ${k}`));
      const { runId, pointer } = await acceptHeld(sessionKey, `message ${k}`);
      // The dispatcher dies right before write k: the batch item fails (SQS keeps the message).
      const crashed = await createDispatcherHandler({ ...stack.deps, db: crashingDb(stack.deps.db, k) })(sqsEvent(runId, sessionKey), createLambdaContext("dispatcher", 30_000));
      expect(crashed.batchItemFailures, `crash before write ${k} of ${writes}`).toEqual([{ itemIdentifier: `msg-${runId}-1` }]);
      // Redelivery: through the real queue and the real dispatcher, twice (a duplicate).
      await stack.deps.queue.send(pointer);
      await createDispatcherHandler(stack.deps)(sqsEvent(runId, sessionKey, 3), createLambdaContext("dispatcher", 30_000));
      const [run] = await allEnded(stack, [runId]);
      expect(run.status, `crash before write ${k}`).toBe("ok");
      expect(await executionsNamed(runId)).toBe(1);
      const session = await getSession(stack.deps.db, sessionKey);
      expect((await readTranscript(stack.deps.db, session!.sessionId)).filter((e) => e.message.role === "user")).toHaveLength(1);
    }
  });

  it("an execution stopped from outside: the run ends aborted and the next queued run starts", async () => {
    oai.enqueue(chat.stall(), chat.text("the next one ran"));
    const requestsBefore = oai.requests.length;
    const first = await postAgent(stack, { sessionKey: "faults-stop", message: "stalls" });
    await waitFor(async () => oai.requests.length > requestsBefore);
    const next = await postAgent(stack, { sessionKey: "faults-stop", message: "queued behind", queue: { mode: "followup" } });
    expect(next.body.status).toBe("queued");
    const executionArn = (await getRun(stack.deps.db, first.body.runId))!.executionArn!;
    const stoppedAt = Date.now();
    await sfn.send(new StopExecutionCommand({ executionArn, error: "Operator", cause: "stopped from the console" }));
    const [stopped, queued] = await allEnded(stack, [first.body.runId, next.body.runId]);
    expect(stopped).toMatchObject({ status: "aborted", error: expect.stringContaining("ABORTED") });
    expect(queued.status).toBe("ok");
    console.log(`lanes-faults: ${JSON.stringify({ stopToNextStartMs: queued.startedAt! - stoppedAt })}`);
    expect(queued.startedAt! - stoppedAt).toBeLessThan(10_000); // within seconds, not at the next sweep
  });

  it("a lane claimed by a run whose execution never started: the sweeper starts it", async () => {
    oai.enqueue(chat.text("started by the sweeper"));
    const { runId } = await acceptHeld("faults-sweep", "never started");
    const failingStart = { ...stack.deps.executions, start: async () => Promise.reject(Object.assign(new Error("throttled"), { name: "ThrottlingException" })) };
    const failed = await createDispatcherHandler({ ...stack.deps, executions: failingStart })(sqsEvent(runId, "faults-sweep"), createLambdaContext("dispatcher", 30_000));
    expect(failed.batchItemFailures).toHaveLength(1);
    expect((await getLane(stack.deps.db, "faults-sweep")).activeRunId).toBe(runId);
    expect(await executionsNamed(runId)).toBe(0);
    await stack.sweepNow();
    const [run] = await allEnded(stack, [runId]);
    expect(run.status).toBe("ok");
    expect(await executionsNamed(runId)).toBe(1);
  });
});

async function waitFor(probe: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
