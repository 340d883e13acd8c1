import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LocalStack } from "../../infra/local/stack";
import { readEvents } from "../../shared/aws/event-log";
import { CAP_SURFACE_AGENT } from "../../shared/protocol/surface";
import { chat, FakeOpenAIServer } from "../support/fake-openai-server";
import { startStackWithFakeOpenAI, stopStackWithFakeOpenAI } from "../support/fake-openai-stack";
import { RUN_END_TIMEOUT_MS } from "../support/timeouts";
import { TestWsClient, type Frame } from "../support/ws-client";

/**
 * One surface per connection, end to end: three subscribers of one session
 * (one that says nothing, one declaring `surface-agent`, one in OpenClaw's
 * TUI's `ui` mode) get the views their connect chose, live and replayed.
 */
let stack: LocalStack;
let oai: FakeOpenAIServer;

beforeAll(async () => {
  ({ stack, oai } = await startStackWithFakeOpenAI());
});
afterAll(async () => stopStackWithFakeOpenAI({ stack, oai }));

const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i} `);
const ofRun = (client: TestWsClient, runId: string) => client.frames.filter((f) => f.type === "event" && f.payload?.runId === runId);

describe("one surface per connection", () => {
  it("both / agent / chat subscribers each get their view of the same stream", async () => {
    oai.enqueue(chat.stream({ text: words(30) }));
    const connects = [
      { auth: { token: stack.authToken } },
      { auth: { token: stack.authToken }, caps: [CAP_SURFACE_AGENT] },
      { auth: { token: stack.authToken }, caps: ["agent-kind", "plugin-approvals", "task-suggestions", "tool-events"], client: { id: "openclaw-tui", mode: "ui" } },
    ];
    // Each socket sends its connect right after opening: a loaded machine must not push one past the 10 s auth deadline.
    const clients: TestWsClient[] = [];
    try {
      for (const params of connects) {
        const client = await TestWsClient.open(stack.webSocketUrl);
        clients.push(client);
        expect((await client.request("connect", params)).ok).toBe(true);
        await client.request("sessions.subscribe", { sessionKey: "surface-1" });
      }
      const ack = await clients[0]!.request("agent", { sessionKey: "surface-1", message: "hello" });
      const runId = ack.payload.runId as string;
      const isEnd = (f: Frame) => f.event === "agent" && f.payload?.runId === runId && f.payload?.data?.phase === "end";
      await Promise.all(clients.map((c) => c.waitFor(isEnd)));
      await Promise.all([clients[0]!, clients[2]!].map((c) => c.waitFor((f) => f.event === "chat" && f.payload?.runId === runId && f.payload?.state === "final")));
      const log = await readEvents(stack.deps.db, runId);
      const texts = log.filter((e) => e.stream === "assistant").length;
      const [both, agent, ui] = clients.map((c) => ofRun(c, runId));
      // Both: every event as `agent`, plus a chat delta per text event and the final.
      expect(both!.filter((f) => f.event === "agent")).toHaveLength(log.length);
      expect(both!.filter((f) => f.event === "chat")).toHaveLength(texts + 1);
      // Agent surface: exactly the log, nothing else.
      expect(agent!.map((f) => f.event)).toEqual(log.map(() => "agent"));
      expect(agent!.map((f) => f.payload.seq)).toEqual(log.map((e) => e.seq));
      // The TUI's view: chat deltas carry the text, agent frames the lifecycle (and no assistant stream).
      expect(ui!.filter((f) => f.event === "agent" && f.payload.stream === "assistant")).toEqual([]);
      expect(ui!.filter((f) => f.event === "agent").map((f) => f.payload.stream)).toEqual(log.filter((e) => e.stream !== "assistant").map((e) => e.stream));
      expect(ui!.filter((f) => f.event === "chat" && f.payload.state === "delta").map((f) => f.payload.deltaText).join("")).toBe(words(30).join(""));
      // events.replay on each connection re-sends the run in that connection's view.
      const before = clients.map((c) => ofRun(c, runId).length);
      for (const client of clients) await client.request("events.replay", { runId });
      const replayed = clients.map((c, i) => ofRun(c, runId).slice(before[i]!).map((f) => f.event));
      expect(replayed[0]).toEqual(both!.map((f) => f.event));
      expect(replayed[1]).toEqual(agent!.map((f) => f.event));
      expect(replayed[2]).toEqual(ui!.map((f) => f.event));
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
  }, RUN_END_TIMEOUT_MS);
});
