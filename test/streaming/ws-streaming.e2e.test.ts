import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LocalStack } from "../../infra/local/stack";
import { getConnection, putConnection, subscribe, subscribers } from "../../shared/aws/connections";
import { readEvents } from "../../shared/aws/event-log";
import { getRun } from "../../shared/aws/runs";
import { GatewayClient, type Frame } from "../../shared/client/gateway-client";
import { followRun, type RunEvent } from "../../shared/client/run-follower";
import { openRunEvents, toolEvent } from "../../shared/events/run-events";
import { isChunkFrame } from "../../shared/protocol/chunks";
import { MAX_FRAME_BYTES } from "../../shared/protocol/limits";
import { CHAT_PATH, chat, chatStreamBody, FakeOpenAIServer } from "../support/fake-openai-server";
import { barrier } from "../support/scripted-sse-server";
import { TestWsClient } from "../support/ws-client";
import { startStackWithFakeOpenAI, stopStackWithFakeOpenAI } from "../support/fake-openai-stack";
import { RUN_END_TIMEOUT_MS } from "../support/timeouts";

/**
 * The streaming protocol end to end on the local stack (issue 7): resume
 * after a drop, several subscribers, frame splitting, gone connections,
 * coalescing. The model is the fake OpenAI server, streaming slowly where a
 * test needs the run to outlive a disconnect.
 */
let stack: LocalStack;
let oai: FakeOpenAIServer;

beforeAll(async () => {
  ({ stack, oai } = await startStackWithFakeOpenAI());
});
afterAll(async () => stopStackWithFakeOpenAI({ stack, oai }));

const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i} `);

async function logged(runId: string) {
  return (await readEvents(stack.deps.db, runId)).map(({ v: _v, expiresAt: _e, ...rest }) => rest);
}

function withoutAgentId(payload: Record<string, unknown>) {
  const { agentId: _a, ...rest } = payload;
  return rest;
}

describe("resume after a dropped connection", () => {
  it("gets every event exactly once, in order, across a drop mid-stream", async () => {
    // Prepare: a reply held after its first words until the follower's socket has died, so the run
    // outlives the drop whatever the machine's pace (no frame delay to bet on).
    const drop = barrier();
    oai.enqueue({ kind: "sse", path: CHAT_PATH, body: chatStreamBody({ text: words(150) }), hold: { afterFrames: 30, until: drop.promise } });
    let dropped = false;
    const seen: RunEvent[] = [];
    // Act: the follower's first socket dies (no close handshake) once it has the first words (the
    // lifecycle start and the coalesced text of the held part), then the rest of the answer streams.
    const result = await followRun({
      url: stack.webSocketUrl,
      token: stack.authToken,
      params: { sessionKey: "resume-1", message: "stream a long answer" },
      reconnectDelaysMs: [300],
      onClient: (client) => {
        if (dropped) return;
        const timer = setInterval(() => {
          if (seen.some((e) => e.stream === "assistant")) {
            dropped = true;
            clearInterval(timer);
            client.terminate();
            drop.release();
          }
        }, 5);
      },
      onEvent: (event) => seen.push(event),
    });
    // Assess
    expect(result).toMatchObject({ status: "ok" });
    expect(result.reconnects).toBeGreaterThanOrEqual(1);
    const log = await logged(result.runId);
    expect(seen.map((e) => e.seq)).toEqual(log.map((e) => e.seq));
    expect(seen.map((e) => e.seq)).toEqual(seen.map((_, i) => i + 1));
    expect(seen.map((e) => withoutAgentId(e as never))).toEqual(log);
    expect(seen.filter((e) => e.stream === "assistant").map((e) => e.data.delta).join("")).toBe(words(150).join(""));
  }, RUN_END_TIMEOUT_MS);
});

describe("several subscribers", () => {
  it("three connections subscribed to one session see identical streams", async () => {
    oai.enqueue(chat.stream({ text: words(40) }));
    const clients = await Promise.all([0, 1, 2].map(() => TestWsClient.open(stack.webSocketUrl)));
    try {
      for (const client of clients) {
        await client.request("connect", { auth: { token: stack.authToken } });
        await client.request("sessions.subscribe", { sessionKey: "fanout-1" });
      }
      const ack = await clients[0]!.request("agent", { sessionKey: "fanout-1", message: "hello all" });
      const runId = ack.payload.runId as string;
      const isEnd = (f: Frame) => f.event === "agent" && f.payload?.runId === runId && f.payload?.data?.phase === "end";
      await Promise.all(clients.map((c) => c.waitFor(isEnd)));
      // The chat surface's final frame follows the lifecycle end frame of the same event: wait for it too.
      await Promise.all(clients.map((c) => c.waitFor((f) => f.event === "chat" && f.payload?.runId === runId && f.payload?.state === "final")));
      const streams = clients.map((c) => c.agentEvents(runId).map((f) => f.payload));
      const log = await logged(runId);
      for (const stream of streams) expect(stream.map((e) => withoutAgentId(e))).toEqual(log);
      // The chat surface rides along: coalesced deltas, one final.
      const chats = clients[1]!.frames.filter((f) => f.event === "chat" && f.payload?.runId === runId).map((f) => f.payload);
      expect(chats.at(-1)).toMatchObject({ state: "final", sessionKey: "fanout-1", agentId: "main", message: { role: "assistant" } });
      expect(chats.filter((c) => c.state === "delta").map((c) => c.deltaText).join("")).toBe(words(40).join(""));
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
  }, RUN_END_TIMEOUT_MS);
});

describe("frame size", () => {
  it("a 200 KB tool result arrives intact across frames of at most 32 KB", async () => {
    // Prepare: a subscriber that records raw frames, and a finished run to attach the event to.
    oai.enqueue(chat.text("ok"));
    const client = await GatewayClient.open({ url: stack.webSocketUrl, token: stack.authToken });
    const raw: string[] = [];
    (client as unknown as { socket: { on(e: string, f: (d: Buffer) => void): void } }).socket.on("message", (d) => raw.push(d.toString()));
    const events: Frame[] = [];
    const received = new Promise<void>((resolve) => {
      (client as unknown as { options: { onEvent: (f: Frame) => void } }).options.onEvent = (f) => {
        events.push(f);
        if (f.payload?.data?.phase === "result") resolve();
      };
    });
    try {
      const ack = await client.request("agent", { sessionKey: "big-1", message: "hi" });
      const runId = ack.payload.runId as string;
      const big = Array.from({ length: 200 * 1024 }, (_, i) => "abcdefghij\n\"é😀"[i % 14]).join("");
      // Act
      const emitter = await openRunEvents(stack.deps, runId, "big-1");
      emitter.emit("tool", toolEvent.result("read", "call_big", false, big));
      await emitter.flush();
      await received;
      // Assess
      const result = events.find((f) => f.payload?.data?.phase === "result");
      expect(result?.payload.data.result).toBe(big);
      expect(raw.filter((r) => isChunkFrame(JSON.parse(r))).length).toBeGreaterThan(6);
      for (const frame of raw) expect(Buffer.byteLength(frame)).toBeLessThanOrEqual(MAX_FRAME_BYTES);
    } finally {
      await client.close();
    }
  }, RUN_END_TIMEOUT_MS);

  it("a 200 KB tool call streams through a real run, split and reassembled", async () => {
    const expression = `${"1+".repeat(100 * 1024)}1`;
    oai.enqueue(chat.toolCall("calculator", { expression }), chat.text("Done."));
    const seen: RunEvent[] = [];
    const result = await followRun({ url: stack.webSocketUrl, token: stack.authToken, params: { sessionKey: "big-2", message: "sum" }, onEvent: (e) => seen.push(e) });
    expect(result.status).toBe("ok");
    const start = seen.find((e) => e.stream === "tool" && e.data.phase === "start");
    expect((start?.data.args as { expression: string }).expression).toBe(expression);
    expect(seen.find((e) => e.stream === "tool" && e.data.phase === "result")?.data.result).toBe(String(100 * 1024 + 1));
  }, RUN_END_TIMEOUT_MS);
});

describe("connections that go away", () => {
  it("a connection gone during a run is removed and the run still ends ok", async () => {
    // Prepare: a subscriber API Gateway no longer knows (PostToConnection answers 410 GoneException).
    await putConnection(stack.deps.db, "ghost-connection");
    await subscribe(stack.deps.db, "ghost-connection", "gone-1");
    oai.enqueue(chat.text("still fine"));
    // Act
    const result = await followRun({ url: stack.webSocketUrl, token: stack.authToken, params: { sessionKey: "gone-1", message: "hi" }, onEvent: () => undefined });
    // Assess
    expect(result.status).toBe("ok");
    expect((await getRun(stack.deps.db, result.runId))?.status).toBe("ok");
    expect(await getConnection(stack.deps.db, "ghost-connection")).toBeUndefined();
    expect(await subscribers(stack.deps.db, "gone-1")).not.toContain("ghost-connection");
  }, RUN_END_TIMEOUT_MS);
});

describe("coalescing", () => {
  it("keeps WebSocket messages per run bounded: 1000 streamed tokens", async () => {
    // The whole answer in one write: the reader finds the tokens already buffered, so coalescing decides the
    // events (1 KB or 150 ms, whichever first), not the pace of a frame-by-frame stream on a busy machine.
    oai.enqueue({ kind: "sse", path: CHAT_PATH, body: chatStreamBody({ text: words(1000) }), burst: true });
    const client = await TestWsClient.open(stack.webSocketUrl);
    try {
      await client.request("connect", { auth: { token: stack.authToken } });
      const ack = await client.request("agent", { sessionKey: "coalesce-1", message: "a thousand tokens please" });
      const runId = ack.payload.runId as string;
      await client.waitFor((f) => f.event === "chat" && f.payload?.runId === runId && f.payload?.state === "final");
      const messages = client.frames.filter((f) => f.type === "event" && f.payload?.runId === runId);
      const assistant = client.agentEvents(runId).filter((f) => f.payload.stream === "assistant");
      // Reported in the closing note: messages (PostToConnection calls) per 1000 streamed tokens.
      console.log(`[coalescing] 1000 tokens -> ${assistant.length} assistant events, ${messages.length} WebSocket messages to one subscriber (agent + chat)`);
      expect(assistant.map((f) => f.payload.data.delta).join("")).toBe(words(1000).join(""));
      // Posts follow events, not tokens: one agent frame per logged event, one chat frame per text event and the final.
      expect(messages).toHaveLength((await logged(runId)).length + assistant.length + 1);
      // The 150 ms timer can only cut the answer where the reader's socket reads cut it: far fewer events than tokens.
      expect(assistant.length).toBeLessThan(1000 / 10);
    } finally {
      await client.close();
    }
  }, RUN_END_TIMEOUT_MS);
});
