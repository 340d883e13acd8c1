import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createLambdaContext } from "../../infra/local/lambda-context";
import type { LocalStack } from "../../infra/local/stack";
import { listAttempts } from "../../shared/aws/attempts";
import { getRun } from "../../shared/aws/runs";
import { chat, FakeOpenAIServer, heldChat, openAIErrorBody } from "../support/fake-openai-server";
import { RUN_END_TIMEOUT_MS } from "../support/timeouts";
import { sampleEvent } from "../support/events";
import { cliAgent, cliAgentsList, cliChatAbort, cliConnect } from "../support/openclaw-frames";
import { TestWsClient, type Frame } from "../support/ws-client";
import { startStackWithFakeOpenAI, stopStackWithFakeOpenAI } from "../support/fake-openai-stack";

/**
 * Issue 9: the frames OpenClaw's CLI sends (captured on the wire, see
 * test/support/openclaw-frames.ts) replayed against the local stack, with the
 * server's answers checked frame by frame against what that client needs
 * (reference section 0): challenge, hello, ack, the final answer on the same
 * request id, dedupe, agents.list, chat.abort, failures.
 */
let stack: LocalStack;
let oai: FakeOpenAIServer;

beforeAll(async () => {
  ({ stack, oai } = await startStackWithFakeOpenAI());
});
afterAll(async () => stopStackWithFakeOpenAI({ stack, oai }));
// The tests share one fake model server: a step one test leaves behind would answer the next test's run
// (a leftover "pong" once ended the chat.abort test's run before its abort arrived). Each test consumes
// what it scripts, or removes it itself and says why.
afterEach(() => {
  const left = oai.pending;
  oai.clear();
  expect(left, "scripted model answers left unconsumed").toBe(0);
});

const isRes = (id: string) => (f: Frame) => f.type === "res" && f.id === id;
const isFinal = (id: string) => (f: Frame) => isRes(id)(f) && f.payload?.status !== "accepted";
const requestsWith = (text: string) => oai.requests.filter((r) => JSON.stringify((r.body as { messages?: unknown })?.messages ?? "").includes(text));

/** Opens a socket the way the CLI does: wait for the challenge, then `connect`. */
async function cliSession(scopes?: string[]): Promise<{ client: TestWsClient; hello: Frame; challenge: Frame }> {
  const client = await TestWsClient.open(stack.webSocketUrl);
  const challenge = await client.waitFor((f) => f.type === "event", 15_000);
  const connect = cliConnect(stack.authToken, scopes);
  client.sendRaw(JSON.stringify(connect));
  const hello = await client.waitFor(isRes(connect.id));
  return { client, hello, challenge };
}

describe("OpenClaw CLI handshake", () => {
  it("pushes connect.challenge first, then answers connect with hello-ok", async () => {
    const { client, hello, challenge } = await cliSession();
    try {
      expect(client.frames[0]).toBe(challenge);
      expect(challenge).toMatchObject({ type: "event", event: "connect.challenge", payload: { nonce: expect.stringMatching(/.+/), ts: expect.any(Number) } });
      expect(Number.isSafeInteger(challenge.payload.ts)).toBe(true);
      expect(hello).toMatchObject({
        ok: true,
        payload: {
          type: "hello-ok",
          protocol: expect.any(Number),
          server: { name: "serverless-agent-runner", version: expect.any(String) },
          auth: { method: "token", role: "operator", scopes: ["operator.write"] },
          policy: { maxPayload: 128 * 1024, maxFrameBytes: 32 * 1024, tickIntervalMs: expect.any(Number) },
        },
      });
      expect(hello.payload.features.methods).toEqual(expect.arrayContaining(["connect", "agent", "agent.wait", "agents.list", "chat.abort", "events.replay", "runs.abort", "sessions.list"]));
      expect(hello.payload.features.events).toEqual(expect.arrayContaining(["connect.challenge", "agent", "chat"]));
    } finally {
      await client.close();
    }
  });

  it("answers a wrong token with ok:false, a code and a message (the CLI prints it and exits 1)", async () => {
    const client = await TestWsClient.open(stack.webSocketUrl);
    try {
      await client.waitFor((f) => f.event === "connect.challenge");
      const connect = cliConnect("not-the-token");
      client.sendRaw(JSON.stringify(connect));
      const res = await client.waitFor(isRes(connect.id));
      expect(res).toMatchObject({ ok: false, error: { code: "UNAUTHORIZED", message: expect.stringContaining("token mismatch"), details: { code: "AUTH_TOKEN_MISMATCH" } } });
    } finally {
      await client.close();
    }
  });
});

describe("the post-connect step", () => {
  it("handles its sample event, and gives up quickly on a connection that is gone", async () => {
    const ws = (event: unknown, _context: unknown) => stack.functions["ws-api"].pool.invoke(event);
    const event = sampleEvent("ws-post-connect.json");
    expect(await ws(event, createLambdaContext("ws-api", 60_000))).toEqual({ statusCode: 200 });
  });
});

describe("OpenClaw CLI turn", () => {
  it("acks, then sends the final answer with the reply text on the same request id, to that connection only", async () => {
    oai.enqueue(chat.text("pong"));
    const { client } = await cliSession();
    const watcher = await cliSession(["operator.read"]);
    try {
      await watcher.client.request("sessions.subscribe", { sessionKey: "agent:main:explicit:proto-a1" });
      const agent = cliAgent("Say pong", { sessionId: "proto-a1" });
      client.sendRaw(JSON.stringify(agent));
      const ack = await client.waitFor(isRes(agent.id));
      expect(ack).toMatchObject({ ok: true, payload: { status: "accepted", runId: expect.any(String), agentId: "main", sessionKey: "agent:main:explicit:proto-a1", acceptedAt: expect.any(Number) } });
      const final = await client.waitFor(isFinal(agent.id));
      expect(final).toMatchObject({
        type: "res",
        ok: true,
        payload: { runId: ack.payload.runId, status: "ok", summary: "completed", result: { payloads: [{ text: "pong", mediaUrl: null }], meta: expect.any(Object) } },
      });
      // Events ride along for UIs, each with sessionKey and agentId; the CLI ignores them.
      const events = client.frames.filter((f) => f.type === "event" && (f.event === "agent" || f.event === "chat"));
      expect(events.length).toBeGreaterThan(2);
      for (const event of events) expect(event.payload).toMatchObject({ sessionKey: "agent:main:explicit:proto-a1", agentId: "main" });
      expect(events.filter((f) => f.event === "chat").map((f) => f.payload.state)).toEqual(["delta", "final"]);
      // The subscriber saw the stream, never the answer meant for the requester.
      await watcher.client.waitFor((f) => f.event === "chat" && f.payload?.state === "final" && f.payload?.runId === ack.payload.runId);
      expect(watcher.client.frames.filter((f) => f.type === "res" && f.id === agent.id)).toEqual([]);
      expect((await getRun(stack.deps.db, ack.payload.runId))?.requester).toMatchObject({ requestId: agent.id });
    } finally {
      await client.close();
      await watcher.client.close();
    }
  }, RUN_END_TIMEOUT_MS);

  it("answers a repeated idempotency key with in_flight while running and the cached final after", async () => {
    const answer = heldChat({ text: "pong" });
    oai.enqueue(answer.step);
    const first = await cliSession();
    const second = await cliSession();
    try {
      const agent = cliAgent("Say pong slowly", { sessionId: "proto-dup" });
      first.client.sendRaw(JSON.stringify(agent));
      const ack = await first.client.waitFor(isRes(agent.id));
      // The CLI re-sends the very same frame after a reconnect.
      const again = { ...agent, id: "2:resent-while-running" };
      second.client.sendRaw(JSON.stringify(again));
      expect(await second.client.waitFor(isRes(again.id))).toMatchObject({ ok: true, payload: { status: "in_flight", runId: ack.payload.runId } });
      answer.release();
      const final = await first.client.waitFor(isFinal(agent.id));
      const later = { ...agent, id: "2:resent-after-the-end" };
      second.client.sendRaw(JSON.stringify(later));
      const cached = await second.client.waitFor(isRes(later.id));
      expect(cached).toMatchObject({ ok: true, payload: { status: "ok", runId: ack.payload.runId } });
      expect(cached.payload.result).toEqual(final.payload.result);
    } finally {
      answer.release();
      await first.client.close();
      await second.client.close();
    }
  }, RUN_END_TIMEOUT_MS);

  it("fails with ok:false, UNAVAILABLE and the run's error summary", async () => {
    oai.enqueue(chat.error(400, openAIErrorBody("Invalid value for 'messages'.", "invalid_request_error")));
    const { client } = await cliSession();
    try {
      const agent = cliAgent("this will fail", { sessionId: "proto-e1" });
      client.sendRaw(JSON.stringify(agent));
      const final = await client.waitFor(isFinal(agent.id));
      expect(final).toMatchObject({ ok: false, payload: { status: "error", summary: expect.any(String) }, error: { code: "UNAVAILABLE", message: expect.any(String) } });
      expect(final.error?.message).toBe(final.payload.summary);
      expect(client.frames.find((f) => f.event === "chat" && f.payload?.state === "error")?.payload).toMatchObject({ errorMessage: final.payload.summary });
    } finally {
      await client.close();
    }
  }, RUN_END_TIMEOUT_MS);

  it("bounds the run by the client's timeout, and a timed-out run ends without another model call", async () => {
    // The answer is held for as long as the test lasts: only the 1 s budget can end the run. Under load the
    // budget may run out before the model is called at all (start and prelude take longer than 1 s); then
    // the held answer is never requested, and the test removes it itself.
    const answer = heldChat({ text: "pong" });
    oai.enqueue(answer.step);
    const { client } = await cliSession();
    try {
      const agent = cliAgent("take your time", { sessionId: "proto-t1" }, undefined, 1);
      client.sendRaw(JSON.stringify(agent));
      const ack = await client.waitFor(isRes(agent.id));
      const final = await client.waitFor(isFinal(agent.id));
      expect(final).toMatchObject({ ok: false, payload: { status: "timeout" }, error: { code: "TIMEOUT" } });
      await stack.idle();
      // A run past its budget is over: no retry, no idle-timeout retry, no second attempt (reference §N.114).
      expect(await getRun(stack.deps.db, ack.payload.runId)).toMatchObject({ status: "timeout", error: expect.stringContaining("time budget") });
      expect(requestsWith("take your time").length).toBeLessThanOrEqual(1);
      expect((await listAttempts(stack.deps.db, ack.payload.runId)).length).toBeLessThanOrEqual(1);
    } finally {
      answer.release();
      if (requestsWith("take your time").length === 0) oai.clear(); // the budget ran out before the model call
      await client.close();
    }
  }, RUN_END_TIMEOUT_MS);
});

describe("OpenClaw CLI side methods", () => {
  it("agents.list names the agent the CLI then picks, and a turn without selector uses its main session", async () => {
    const listing = await cliSession(["operator.read"]);
    try {
      const list = cliAgentsList();
      listing.client.sendRaw(JSON.stringify(list));
      expect(await listing.client.waitFor(isRes(list.id))).toMatchObject({ ok: true, payload: { defaultId: "main", agents: [{ id: "main" }] } });
    } finally {
      await listing.client.close();
    }
    oai.enqueue(chat.text("pong"));
    const { client } = await cliSession();
    try {
      const agent = cliAgent("Say pong", { agentId: "main" });
      client.sendRaw(JSON.stringify(agent));
      expect(await client.waitFor(isRes(agent.id))).toMatchObject({ payload: { status: "accepted", sessionKey: "agent:main:main" } });
      expect(await client.waitFor(isFinal(agent.id))).toMatchObject({ ok: true, payload: { status: "ok" } });
    } finally {
      await client.close();
    }
  }, RUN_END_TIMEOUT_MS);

  it("chat.abort (the CLI's SIGINT) stops the run; the final answer says aborted", async () => {
    // Held after its first word until the test ends: the run is streaming when the abort arrives, however slow the machine.
    const answer = heldChat({ text: "pong" });
    oai.enqueue(answer.step);
    const { client } = await cliSession();
    try {
      const agent = cliAgent("never mind", { sessionId: "proto-s4" });
      client.sendRaw(JSON.stringify(agent));
      const ack = await client.waitFor(isRes(agent.id));
      await client.waitFor((f) => f.event === "agent" && f.payload?.stream === "assistant");
      const abort = cliChatAbort("agent:main:explicit:proto-s4", ack.payload.runId);
      client.sendRaw(JSON.stringify(abort));
      expect(await client.waitFor(isRes(abort.id))).toMatchObject({ ok: true, payload: { aborted: true, runIds: [ack.payload.runId] } });
      expect(await client.waitFor(isFinal(agent.id))).toMatchObject({ ok: false, payload: { status: "aborted" }, error: { code: "ABORTED" } });
      expect(requestsWith("never mind")).toHaveLength(1);
    } finally {
      answer.release();
      await client.close();
    }
  }, RUN_END_TIMEOUT_MS);

  it("keeps answering unknown methods with ok:false and a code", async () => {
    const { client } = await cliSession();
    try {
      expect(await client.request("health", {})).toMatchObject({ ok: false, error: { code: "UNKNOWN_METHOD", message: expect.any(String) } });
    } finally {
      await client.close();
    }
  });
});
