import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LocalStack } from "../../infra/local/stack";
import { getLane } from "../../shared/aws/lanes";
import { getRun, TERMINAL_STATUSES, type RunRecord } from "../../shared/aws/runs";
import { chat, FakeOpenAIServer } from "../support/fake-openai-server";
import { startStackWithFakeOpenAI, stopStackWithFakeOpenAI } from "../support/fake-openai-stack";
import { TestWsClient } from "../support/ws-client";
import { until } from "../support/until";

/**
 * Issue 18, queue behaviours on the deployed local stack: runs start in
 * their session's acceptance order whatever order concurrent intakes ran in,
 * a resent message id is one message (OpenClaw's queue dedupe), and
 * `chat.abort` without a run id cancels the session's queued turns before
 * its running one.
 */
let stack: LocalStack;
let oai: FakeOpenAIServer;

beforeAll(async () => {
  ({ stack, oai } = await startStackWithFakeOpenAI());
});
afterAll(async () => stopStackWithFakeOpenAI({ stack, oai }));

async function post(body: Record<string, unknown>): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${stack.restUrl}/v1/agent`, {
    method: "POST",
    headers: { authorization: `Bearer ${stack.authToken}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const ended = (runId: string) =>
  until<RunRecord>(async () => {
    const run = await getRun(stack.deps.db, runId);
    return run && TERMINAL_STATUSES.has(run.status) ? run : undefined;
  }, `run ${runId} to end`);

/** A session whose first run is mid-answer (the model call holds until aborted). */
async function busySession(sessionKey: string): Promise<string> {
  const before = oai.requests.length;
  oai.enqueue(chat.stall({ text: "thinking about it" }));
  const first = await post({ sessionKey, message: "first" });
  expect(first.status).toBe(202);
  await until(async () => (oai.requests.length > before ? true : undefined), "the first run's model call");
  return String(first.body.runId);
}

describe("queue dedupe by message id", () => {
  it("a resent message id in the same session is one queued message; another id or session is another", async () => {
    const sessionKey = `dedupe-${Date.now()}`;
    const running = await busySession(sessionKey);
    const message = { sessionKey, message: "follow up", messageId: "m-2", queue: { mode: "followup" } };
    const once = await post(message);
    const again = await post(message);
    expect(once).toMatchObject({ status: 202, body: { status: "queued" } });
    // A repeat answers 200 (nothing new accepted) with the same run.
    expect(again).toMatchObject({ status: 200, body: { runId: once.body.runId, status: "queued" } });
    const other = await post({ ...message, messageId: "m-3" });
    expect(other.body.runId).not.toBe(once.body.runId);
    const lane = await getLane(stack.deps.db, sessionKey);
    expect(lane.activeRunId).toBe(running);
    expect(lane.waiting.map((entry) => entry.runId)).toEqual([once.body.runId, other.body.runId]);
    // The same id in another session is that session's own message.
    const elsewhere = await post({ ...message, sessionKey: `${sessionKey}-b` });
    expect(elsewhere.body.runId).not.toBe(once.body.runId);
    await stopSession(sessionKey);
    await ended(String(elsewhere.body.runId));
  }, 120_000);
});

async function stopSession(sessionKey: string): Promise<Record<string, unknown>> {
  const client = await TestWsClient.open(stack.webSocketUrl);
  try {
    await client.request("connect", { auth: { token: stack.authToken } });
    const answer = await client.request("chat.abort", { sessionKey });
    return answer.payload as Record<string, unknown>;
  } finally {
    await client.close();
  }
}

describe("chat.abort without a run id", () => {
  it("cancels the session's queued turns, then its running run: none of them reaches the model", async () => {
    const sessionKey = `abort-all-${Date.now()}`;
    const running = await busySession(sessionKey);
    const queued = [];
    for (const text of ["second", "third"]) queued.push(String((await post({ sessionKey, message: text, queue: { mode: "followup" } })).body.runId));
    const modelCalls = oai.requests.length;

    const answer = await stopSession(sessionKey);
    expect(answer).toMatchObject({ aborted: true });
    expect(answer.runIds).toEqual([...queued, running]);
    for (const runId of [...queued, running]) expect((await ended(runId)).status).toBe("aborted");
    // The lane lets go of the ended turns when its running run hands it on.
    await until(async () => {
      const now = await getLane(stack.deps.db, sessionKey);
      return now.activeRunId === undefined && now.waiting.length === 0 ? now : undefined;
    }, "the lane to be free and empty");
    expect(oai.requests.length).toBe(modelCalls);
  }, 120_000);
});

describe("acceptance order", () => {
  it("concurrent messages to a new session start in the order of the sequence numbers their answers carry", async () => {
    const sessionKey = `order-${Date.now()}`;
    const texts = Array.from({ length: 8 }, (_, i) => `message ${i + 1}`);
    for (const text of texts) oai.enqueue(chat.text(`answer to ${text}`));
    const from = oai.requests.length;
    // All at once: the intakes (each its own Lambda sandbox) race each other and the dispatcher.
    const answers = await Promise.all(texts.map((message) => post({ sessionKey, message, queue: { mode: "followup" } })));
    const seqOf = new Map(answers.map((answer, i) => [texts[i], Number(answer.body.seq)]));
    expect([...seqOf.values()].sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    for (const answer of answers) await ended(String(answer.body.runId));
    for (const answer of answers) expect((await getRun(stack.deps.db, String(answer.body.runId)))?.seq).toBe(answer.body.seq);

    const lastUser = (body: unknown) => {
      const messages = (body as { messages: { role: string; content: string }[] }).messages;
      return [...messages].reverse().find((m) => m.role === "user")?.content;
    };
    const started = oai.requests.slice(from).map((request) => lastUser(request.body));
    expect(started).toEqual([...texts].sort((a, b) => seqOf.get(a)! - seqOf.get(b)!));
  }, 180_000);
});
