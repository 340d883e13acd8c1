/**
 * Issue 6, "How to prove it", on the whole local stack with a fake OpenAI
 * server speaking the real wire format (a model stream held open until the
 * test releases it, or stalled, keeps a session busy while the next message
 * arrives; nothing depends on how fast the machine is):
 *  - each queue mode with its observable outcome (intake answers, events,
 *    transcript);
 *  - the dispatcher killed between its writes (an injected fault) and
 *    redelivered still gives exactly one execution per run;
 *  - an execution stopped from outside hands its lane to the next run within
 *    seconds; a run whose execution never started is started by the sweeper.
 */
import { createDispatcherHandler } from "../../functions/dispatcher/app";
import { ListExecutionsCommand, SFNClient, StopExecutionCommand } from "@aws-sdk/client-sfn";
import type { SQSEvent } from "aws-lambda";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLambdaContext } from "../../infra/local/lambda-context";
import { startLocalStack, type LocalStack } from "../../infra/local/stack";
import { readEvents } from "../../shared/aws/event-log";
import { getLane } from "../../shared/aws/lanes";
import { getRun } from "../../shared/aws/runs";
import { getSession } from "../../shared/aws/sessions";
import { acceptRun } from "../../shared/intake/intake";
import { crashingDb, RecordingQueue } from "../lanes/support";
import { readTranscript } from "../../shared/aws/transcript";
import { SKIPPED_FOR_STEERING } from "../../shared/agent/attempt";
import { loadAgentConfig } from "../../shared/config/config";
import { DROPPED_ERROR } from "../../shared/intake/admission";
import { CHAT_PATH, chat, chatStreamBody, FakeOpenAIServer, type ChatScript } from "../support/fake-openai-server";
import { barrier, type ScriptStep } from "../support/scripted-sse-server";
import { TestWsClient } from "../support/ws-client";
import { RUN_END_TIMEOUT_MS, STACK_START_TIMEOUT_MS } from "../support/timeouts";
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
}, STACK_START_TIMEOUT_MS);
afterAll(async () => {
  sfn?.destroy();
  await stack?.close();
  await oai?.close();
});

/**
 * A streamed completion that sends its first frame, then holds the rest until
 * the test releases it: the session is busy for exactly as long as the test
 * needs (no race between a frame delay and the next message's delivery).
 */
function held(script: ChatScript): { step: ScriptStep; release: () => void } {
  const gate = barrier();
  return { step: { kind: "sse", path: CHAT_PATH, body: chatStreamBody(script), hold: { afterFrames: 1, until: gate.promise } }, release: gate.release };
}

/** Runs `work` while a held stream waits, then releases it (also when `work` fails, so the run can end). */
async function whileHeld<T>(stream: { release(): void }, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } finally {
    stream.release();
  }
}

async function until(probe: () => boolean | Promise<boolean>, timeoutMs = RUN_END_TIMEOUT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Posts the first message of a session and waits until its model call is streaming. */
async function busy(sessionKey: string, message = "first") {
  const requestsBefore = oai.requests.length;
  const first = await postAgent(stack, { sessionKey, message });
  expect(first.body.status).toBe("accepted");
  await until(() => oai.requests.length > requestsBefore);
  return first.body.runId as string;
}

async function transcriptOf(sessionKey: string) {
  const session = await getSession(stack.deps.db, sessionKey);
  return (await readTranscript(stack.deps.db, session!.sessionId)).map((e) => e.message);
}

const lastUserText = (request: { body: unknown }) => {
  const messages = (request.body as { messages: { role: string; content: string }[] }).messages;
  return messages.filter((m) => m.role === "user").at(-1)?.content;
};

describe("queue modes on the local stack", () => {
  it("steer: the running run skips its unstarted tool calls and answers the new message", async () => {
    const toolCalls = held({ toolCalls: [{ name: "calculator", args: { expression: "1 + 1" } }, { name: "calculator", args: { expression: "2 + 2" } }] });
    oai.enqueue(toolCalls.step, chat.text("Only 2 + 2 then: 4."));
    const running = await busy("mode-steer", "compute 1 + 1 and 2 + 2");
    const steered = await whileHeld(toolCalls, () => postAgent(stack, { sessionKey: "mode-steer", message: "actually, only 2 + 2" }));
    expect(steered).toMatchObject({ status: 202, body: { status: "steered", intoRunId: running, queueMode: "steer" } });
    const [run, message] = await allEnded(stack, [running, steered.body.runId]);
    expect(run.status).toBe("ok");
    expect(message).toMatchObject({ status: "ok", mergedInto: running, result: run.result });
    const transcript = await transcriptOf("mode-steer");
    expect(transcript.map((m) => m.role)).toEqual(["user", "assistant", "tool_result", "tool_result", "user", "assistant"]);
    expect(transcript.filter((m) => m.role === "tool_result").map((m) => (m as { content: string }).content)).toEqual([SKIPPED_FOR_STEERING, SKIPPED_FOR_STEERING]);
    expect(lastUserText(oai.requests.at(-1)!)).toBe("actually, only 2 + 2");
    const tools = (await readEvents(stack.deps.db, running)).filter((e) => e.stream === "tool");
    expect(tools.length).toBeGreaterThanOrEqual(4); // start + result for each skipped call
  });

  it("followup: queued with its position, each its own run, in order", async () => {
    const first = held({ text: "first answer" });
    oai.enqueue(first.step, chat.text("second answer"), chat.text("third answer"));
    const running = await busy("mode-followup");
    const followup = (message: string) => postAgent(stack, { sessionKey: "mode-followup", message, queue: { mode: "followup" } });
    const [a, b] = await whileHeld(first, async () => [await followup("second"), await followup("third")]);
    expect([a.body.status, a.body.position, b.body.status, b.body.position]).toEqual(["queued", 1, "queued", 2]);
    const runs = await allEnded(stack, [running, a.body.runId, b.body.runId]);
    expect(runs.map((r) => r.status)).toEqual(["ok", "ok", "ok"]);
    expect(runs[0].endedAt!).toBeLessThanOrEqual(runs[1].startedAt!);
    expect(runs[1].endedAt!).toBeLessThanOrEqual(runs[2].startedAt!);
    expect((await transcriptOf("mode-followup")).filter((m) => m.role === "user").map((m) => (m as { content: string }).content)).toEqual(["first", "second", "third"]);
  });

  it("collect: a burst while busy becomes one follow-up run; every message gets its answer", async () => {
    const first = held({ text: "first answer" });
    oai.enqueue(first.step, chat.text("one answer for all three"));
    const running = await busy("mode-collect");
    const collect = { queue: { mode: "collect", debounceMs: 200 } };
    const burst = await whileHeld(first, async () => {
      const posted = [];
      for (const message of ["one", "two", "three"]) posted.push(await postAgent(stack, { sessionKey: "mode-collect", message, ...collect }));
      return posted;
    });
    expect(burst.map((p) => p.body.status)).toEqual(["collected", "collected", "collected"]);
    const runs = await allEnded(stack, [running, ...burst.map((p) => p.body.runId)]);
    expect(runs.map((r) => r.status)).toEqual(["ok", "ok", "ok", "ok"]);
    expect(runs.slice(2).map((r) => r.mergedInto)).toEqual([burst[0].body.runId, burst[0].body.runId]);
    const users = (await transcriptOf("mode-collect")).filter((m) => m.role === "user").map((m) => (m as { content: string }).content);
    expect(users).toHaveLength(2);
    expect(users[1]).toMatch(/Queued #1\none[\s\S]*Queued #2\ntwo[\s\S]*Queued #3\nthree/);
    expect(runs[3].result?.payloads[0]?.text).toBe("one answer for all three");
  });

  it("interrupt: the running run stops at its next boundary and the new message runs", async () => {
    oai.enqueue(chat.stall(), chat.text("done with the new one"));
    const running = await busy("mode-interrupt");
    const urgent = await postAgent(stack, { sessionKey: "mode-interrupt", message: "stop, do this", queue: { mode: "interrupt" } });
    expect(urgent.body).toMatchObject({ status: "queued", position: 1, interruptedRunId: running });
    const [stopped, next] = await allEnded(stack, [running, urgent.body.runId]);
    expect(stopped.status).toBe("aborted");
    expect(next.status).toBe("ok");
    const lifecycle = (await readEvents(stack.deps.db, running)).filter((e) => e.stream === "lifecycle").map((e) => e.data.phase);
    expect(lifecycle).toEqual(["start", "error"]);
  });

  it("reject: answered SESSION_BUSY at once over REST and WebSocket; nothing is queued", async () => {
    oai.enqueue(chat.stall());
    const running = await busy("mode-reject");
    const refused = await postAgent(stack, { sessionKey: "mode-reject", message: "no", queue: { mode: "reject" } });
    expect(refused).toMatchObject({ status: 429, body: { error: { code: "SESSION_BUSY", details: { reason: "busy", activeRunId: running } } } });
    const client = await TestWsClient.open(stack.webSocketUrl);
    try {
      await client.request("connect", { auth: { token: stack.authToken } });
      const ws = await client.request("agent", { sessionKey: "mode-reject", message: "no", idempotencyKey: "ws-rej", queue: { mode: "reject" } });
      expect(ws).toMatchObject({ ok: false, error: { code: "SESSION_BUSY" } });
    } finally {
      await client.close();
    }
    expect((await getLane(stack.deps.db, "mode-reject")).waiting).toEqual([]);
    await fetch(`${stack.restUrl}/v1/runs/${running}/abort`, { method: "POST", headers: { authorization: `Bearer ${stack.authToken}`, "content-type": "application/json" }, body: "{}" });
    expect((await allEnded(stack, [running]))[0].status).toBe("aborted");
  });

  it("cap with drop summarize: the oldest waiting message is dropped and summarized for the next run", async () => {
    oai.enqueue(chat.stall(), chat.text("answered the survivor"));
    const running = await busy("mode-cap");
    const options = { queue: { mode: "followup", cap: 1, drop: "summarize" } };
    const w1 = await postAgent(stack, { sessionKey: "mode-cap", message: "an old request nobody will run", ...options });
    const w2 = await postAgent(stack, { sessionKey: "mode-cap", message: "the survivor", ...options });
    expect([w1.body.status, w2.body.status]).toEqual(["queued", "queued"]);
    expect(await getRun(stack.deps.db, w1.body.runId)).toMatchObject({ status: "error", error: DROPPED_ERROR });
    await fetch(`${stack.restUrl}/v1/runs/${running}/abort`, { method: "POST", headers: { authorization: `Bearer ${stack.authToken}`, "content-type": "application/json" }, body: "{}" });
    const [, survivor] = await allEnded(stack, [running, w2.body.runId]);
    expect(survivor.status).toBe("ok");
    const prompt = lastUserText(oai.requests.at(-1)!)!;
    expect(prompt).toContain("[Queue overflow] 1 earlier message was dropped");
    expect(prompt).toContain("- an old request nobody will run");
    expect(prompt.endsWith("the survivor")).toBe(true);
  });
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
    // The lane claim and the global slot (the first execution's ARN is written by the run start, not here).
    expect(writes).toBeGreaterThanOrEqual(2);

    for (let k = 1; k <= writes; k += 1) {
      const sessionKey = `faults-crash-${k}`;
      oai.enqueue(chat.text(`answer ${k}`));
      const { runId, pointer } = await acceptHeld(sessionKey, `message ${k}`);
      // The dispatcher dies right before write k: the batch item fails (SQS keeps the message).
      const crashed = await createDispatcherHandler({ ...stack.deps, db: crashingDb(stack.deps.db, k) })(sqsEvent(runId, sessionKey), createLambdaContext("dispatcher", 30_000));
      expect(crashed.batchItemFailures, `crash before write ${k} of ${writes}`).toEqual([{ itemIdentifier: `msg-${runId}-1` }]);
      // Redelivery: through the real queue and the real dispatcher, twice (a duplicate).
      await stack.deps.queue.send(pointer);
      await stack.functions.dispatcher.pool.invoke(sqsEvent(runId, sessionKey, 3));
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
    await until(() => oai.requests.length > requestsBefore);
    const next = await postAgent(stack, { sessionKey: "faults-stop", message: "queued behind", queue: { mode: "followup" } });
    expect(next.body.status).toBe("queued");
    const executionArn = (await getRun(stack.deps.db, first.body.runId))!.executionArn!;
    const stoppedAt = Date.now();
    await sfn.send(new StopExecutionCommand({ executionArn, error: "Operator", cause: "stopped from the console" }));
    const [stopped, queued] = await allEnded(stack, [first.body.runId, next.body.runId]);
    expect(stopped).toMatchObject({ status: "aborted", error: expect.stringContaining("ABORTED") });
    expect(queued.status).toBe("ok");
    // This stack has no periodic sweeper (sweepIntervalMs: 0): the next run started, so the stop handed the lane over.
    console.log(`lanes-faults: ${JSON.stringify({ stopToNextStartMs: queued.startedAt! - stoppedAt })}`);
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
