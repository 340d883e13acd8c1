/**
 * Issue 16: an execution that dies of the service WHILE its attempt Lambda
 * runs (States.Runtime, or lost as if deleted), on the template-deployed
 * local stack. The fault layer kills the execution right after one of the
 * attempt's own writes (infra/local/faults.ts, the edge rule's `execution`
 * effect); the Lambda goes on, as it does in AWS. The sweeper re-drives the
 * run (`<runId>-r1`), marking the run's redriveGeneration first: the old
 * attempt sees it within a second and stops without deciding or finalizing,
 * and from then on sends nothing (shared/run/run-watch.ts "superseded").
 * Each case: one terminal status and one answer, no orphan tool_use, a
 * gap-free event log whose assistant text after its last retraction is the
 * final answer (what a client shows), the lane released.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FaultPlan } from "../../infra/local/faults";
import type { LocalStack } from "../../infra/local/stack";
import { listAttempts } from "../../shared/aws/attempts";
import { readEvents } from "../../shared/aws/event-log";
import { readTranscript } from "../../shared/aws/transcript";
import { runIdForIdempotencyKey } from "../../shared/core/ids";
import { endedRun, executionsOf, expectRunInvariants } from "../support/fault-invariants";
import { chat, heldChat, type FakeOpenAIServer } from "../support/fake-openai-server";
import { startMcpFaultStack, type McpFaultStack } from "../support/mcp-fault-stack";
import type { McpTestServer } from "../support/mcp-test-server";
import { STACK_START_TIMEOUT_MS, RUN_END_TIMEOUT_MS } from "../support/timeouts";
import { until } from "../support/until";
import { TestWsClient, type Frame } from "../support/ws-client";

const plan = new FaultPlan();
const LATE_ANSWER = "The late answer of the dead execution.";
/** The attempt's DynamoDB writes that carry the late answer (its commit reaching the transcript's fence). */
const lateCommits: { statusCode: number }[] = [];
let stack: LocalStack;
let oai: FakeOpenAIServer;
let mcp: McpTestServer;

let fixture: McpFaultStack | undefined;

beforeAll(async () => {
  const onEdgeCall = (call: { action: string; statusCode: number; requestBody: Buffer }) => {
    if (call.action === "dynamodb:PutItem" && call.requestBody.includes(LATE_ANSWER)) lateCommits.push({ statusCode: call.statusCode });
  };
  fixture = await startMcpFaultStack(plan, { onEdgeCall });
  ({ stack, oai, mcp } = fixture);
}, STACK_START_TIMEOUT_MS);
afterAll(async () => fixture?.close());

interface StreamedEvent {
  seq: number;
  stream: string;
  data: Record<string, unknown>;
}

/** What a client shows: the assistant deltas in seq order (each seq once), a retraction (`reset`) dropping what came before. */
function shownText(events: StreamedEvent[]): string {
  const bySeq = new Map<number, StreamedEvent>();
  for (const event of events) if (!bySeq.has(event.seq)) bySeq.set(event.seq, event);
  let text = "";
  for (const event of [...bySeq.values()].sort((a, b) => a.seq - b.seq)) {
    if (event.stream !== "assistant") continue;
    text = event.data.reset === true ? "" : text + String(event.data.delta ?? "");
  }
  return text;
}

const liveEvents = (client: TestWsClient, runId: string): StreamedEvent[] => client.agentEvents(runId).map((f) => f.payload as StreamedEvent);
const isFinalFor = (runId: string) => (f: Frame) => f.type === "res" && f.payload?.runId === runId && f.payload?.status !== "accepted";
const answerOf = (run: { result?: { payloads: { text?: string }[] } }) => run.result?.payloads.map((p) => p.text ?? "").join("\n\n");

async function assistantAnswers(sessionId: string): Promise<string[]> {
  const messages = await readTranscript(stack.deps.db, sessionId);
  return messages
    .map((entry) => entry.message)
    .filter((m) => m.role === "assistant")
    .map((m) => (Array.isArray(m.content) ? m.content.filter((b) => b.type === "text").map((b) => (b as { text: string }).text).join("") : String(m.content)))
    .filter((text) => text !== "");
}

/** Opens the requester's socket and sends the message as an `agent` request. */
async function sendOverWs(sessionKey: string, message: string): Promise<{ runId: string; client: TestWsClient }> {
  const client = await TestWsClient.open(stack.webSocketUrl);
  await client.request("connect", { auth: { token: stack.authToken } });
  const idempotencyKey = `k-${sessionKey}`;
  const res = await client.request("agent", { sessionKey, message, idempotencyKey }, RUN_END_TIMEOUT_MS);
  expect(res.payload.runId).toBe(runIdForIdempotencyKey(idempotencyKey));
  return { runId: res.payload.runId, client };
}

describe("an execution that dies while its attempt runs", () => {
  it("States.Runtime mid-stream: the re-drive answers once; the cut attempt's partial text is withdrawn", async () => {
    const sessionKey = "mid-runtime";
    const runId = runIdForIdempotencyKey(`k-${sessionKey}`);
    plan.clear();
    // The first attempt streams two frames of its answer and hangs there (until its stream is cut).
    const cut = heldChat({ text: "A partial answer the dead execution never finishes" }, 2);
    oai.enqueue(cut.step, chat.text("The answer of the re-driven run."));
    // Its execution dies right after the attempt logged its first text.
    plan.add({ at: "edge", caller: "attempt", action: "dynamodb:PutItem", bodyIncludes: [runId, '"assistant"'], effect: { kind: "execution", fault: "runtime_failure", executionName: runId } });
    const asked = oai.requests.length;
    const { client } = await sendOverWs(sessionKey, "hello");
    try {
      const run = await endedRun(stack, runId, { sweep: false }); // the execution's status-change event alone
      await stack.idle();
      expect(plan.pending, "the fault fired").toBe(0);
      await expectRunInvariants(stack, run, "ok");
      expect(answerOf(run)).toBe("The answer of the re-driven run.");
      expect((await executionsOf(stack, runId)).sort()).toEqual([runId, `${runId}-r1`]);
      expect(oai.requests.length - asked, "the model was asked once per attempt").toBe(2);
      expect(await assistantAnswers(run.sessionId), "one answer committed").toEqual(["The answer of the re-driven run."]);
      const log = await readEvents(stack.deps.db, runId, 0, 1000);
      const cutText = String(log.find((e) => e.stream === "assistant")?.data.delta ?? "");
      expect(cutText !== "" && "A partial answer the dead execution never finishes".startsWith(cutText), "the cut attempt's text was streamed first").toBe(true);
      expect(shownText(log), "the log's text after its last retraction is the answer").toBe("The answer of the re-driven run.");
      expect(await client.waitFor(isFinalFor(runId), RUN_END_TIMEOUT_MS)).toMatchObject({ ok: true, payload: { status: "ok" } });
      expect(shownText(liveEvents(client, runId)), "the requester's live text is the answer").toBe("The answer of the re-driven run.");
    } finally {
      cut.release();
      await client.close();
    }
  }, RUN_END_TIMEOUT_MS);

  it("lost after a mutating tool completed: the re-drive does not run it again and answers once", async () => {
    const sessionKey = "mid-lost-tool";
    const runId = runIdForIdempotencyKey(`k-${sessionKey}`);
    const title = "lost execution ticket";
    plan.clear();
    // The first attempt's follow-up call after the tool hangs before its first frame (until its stream is cut).
    const cut = heldChat({ text: "Filed, says the dead execution." }, 0);
    oai.enqueue(chat.toolCall("kb__create_ticket", { title }, "call_mid_lost"), cut.step, chat.text("Your ticket is filed."));
    plan.add({ at: "edge", caller: "attempt", action: "dynamodb:UpdateItem", bodyIncludes: ["TOOL#call_mid_lost", ":completed"], effect: { kind: "execution", fault: "lost", executionName: runId } });
    const asked = oai.requests.length;
    const res = await fetch(`${stack.restUrl}/v1/agent`, {
      method: "POST",
      headers: { authorization: `Bearer ${stack.authToken}`, "content-type": "application/json" },
      body: JSON.stringify({ sessionKey, message: `File a ticket: ${title}`, idempotencyKey: `k-${sessionKey}` }),
    });
    expect(res.status).toBe(202);
    try {
      // The dead execution's attempt goes on to its next model call: only then does the sweep find the execution gone.
      await until(async () => (oai.requests.length >= asked + 2 ? true : undefined), "the first attempt's call after the tool", RUN_END_TIMEOUT_MS);
      expect(plan.pending, "the execution was lost").toBe(0);
      const run = await endedRun(stack, runId, { sweep: true });
      await stack.idle();
      await expectRunInvariants(stack, run, "ok");
      expect(answerOf(run)).toBe("Your ticket is filed.");
      expect(mcp.callsOf("create_ticket").filter((call) => call.args.title === title), "the mutating tool ran once").toHaveLength(1);
      expect(oai.pending, "every scripted model answer was used, none twice").toBe(0);
      expect(await executionsOf(stack, runId), "the lost execution is gone; its re-drive ran the run").toEqual([`${runId}-r1`]);
      expect(await assistantAnswers(run.sessionId), "one answer committed").toEqual(["Your ticket is filed."]);
      expect(shownText(await readEvents(stack.deps.db, runId, 0, 1000))).toBe("Your ticket is filed.");
    } finally {
      cut.release();
    }
  }, RUN_END_TIMEOUT_MS);

  it("an old attempt that finishes its answer after the re-drive took over commits nothing and finalizes nothing", async () => {
    const sessionKey = "mid-late-finish";
    const runId = runIdForIdempotencyKey(`k-${sessionKey}`);
    plan.clear();
    const late = heldChat({ text: LATE_ANSWER }, 2);
    const redriven = heldChat({ text: "The answer of the re-driven run." }, 0);
    oai.enqueue(late.step, redriven.step);
    plan.add({ at: "edge", caller: "attempt", action: "dynamodb:PutItem", bodyIncludes: [runId, '"assistant"'], effect: { kind: "execution", fault: "runtime_failure", executionName: runId } });
    // Every read of the re-drive signal fails: the old attempt never learns it was superseded, so its late
    // answer reaches the transcript's fence (the re-drive's attempt claimed the writer before asking the model).
    plan.add({ at: "edge", caller: "attempt", action: "dynamodb:GetItem", bodyIncludes: ["redriveGeneration", runId], effect: { kind: "throttle", code: "ThrottlingException" }, times: 100_000 });
    const asked = oai.requests.length;
    const { client } = await sendOverWs(sessionKey, "hello");
    try {
      await until(async () => (oai.requests.length >= asked + 2 ? true : undefined), "the re-drive's model call", RUN_END_TIMEOUT_MS);
      // The re-drive's emitter logged the old writer's reserved seqs as retractions before the old one goes on.
      await until(async () => ((await readEvents(stack.deps.db, runId, 0, 1000)).some((e) => e.data.reason === "lost") ? true : undefined), "the old writer's seqs retracted", RUN_END_TIMEOUT_MS);
      late.release();
      await until(async () => (lateCommits.length > 0 ? true : undefined), "the old attempt's commit of its late answer", RUN_END_TIMEOUT_MS);
      redriven.release();
      const run = await endedRun(stack, runId, { sweep: false });
      await stack.idle();
      await expectRunInvariants(stack, run, "ok");
      expect(answerOf(run)).toBe("The answer of the re-driven run.");
      expect(await assistantAnswers(run.sessionId), "the late answer was never committed").toEqual(["The answer of the re-driven run."]);
      expect((await listAttempts(stack.deps.db, runId)).map((a) => a.model), "only the re-drive's attempt decided (one record)").toHaveLength(1);
      expect(shownText(await readEvents(stack.deps.db, runId, 0, 1000)), "the log's text after its last retraction is the answer").toBe("The answer of the re-driven run.");
      expect(await client.waitFor(isFinalFor(runId), RUN_END_TIMEOUT_MS)).toMatchObject({ ok: true, payload: { status: "ok", result: { payloads: [{ text: "The answer of the re-driven run." }] } } });
    } finally {
      late.release();
      redriven.release();
      await client.close();
    }
  }, RUN_END_TIMEOUT_MS);
});
