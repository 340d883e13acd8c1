import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLikeNpmStart, type StartedApp } from "../support/npm-start";
import { TestWsClient, type Frame } from "../support/ws-client";

let app: StartedApp;
const auth = () => ({ authorization: `Bearer ${app.token}`, "content-type": "application/json" });

beforeAll(async () => {
  app = await startLikeNpmStart();
});
afterAll(async () => app?.stop());

/** Checks the one-run event contract: per-run seq from 1 with no gaps, start first, end last. */
function assertRunEvents(events: { seq: number; stream: string; data: Record<string, unknown> }[]) {
  expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
  expect(events[0]).toMatchObject({ stream: "lifecycle", data: { phase: "start" } });
  expect(events[events.length - 1]).toMatchObject({ stream: "lifecycle", data: { phase: "end" } });
  expect(events.filter((e) => e.stream === "assistant").length).toBeGreaterThanOrEqual(1);
}

describe("npm start: the whole flow on loopback", () => {
  it("prints where it listens and labels the offline model", () => {
    expect(app.restUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(app.webSocketUrl).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/ws$/);
    expect(app.token.length).toBeGreaterThan(10);
    expect(app.model).toContain("offline/echo");
    expect(app.model).toContain("OFFLINE");
  });

  it("runs a message over REST: 202, idempotent repeat, wait, events, history", async () => {
    const body = JSON.stringify({ sessionKey: "rest-session", message: "hello over rest", idempotencyKey: "rest-k1" });
    const first = await fetch(`${app.restUrl}/v1/agent`, { method: "POST", headers: auth(), body });
    expect(first.status).toBe(202);
    const accepted = (await first.json()) as any;
    expect(accepted).toMatchObject({ status: "accepted", runId: expect.stringMatching(/^run_/), acceptedAt: expect.any(Number) });

    const repeat = await fetch(`${app.restUrl}/v1/agent`, { method: "POST", headers: auth(), body });
    expect(await repeat.json()).toMatchObject({ runId: accepted.runId, acceptedAt: accepted.acceptedAt, cached: true });

    const wait = await fetch(`${app.restUrl}/v1/runs/${accepted.runId}/wait`, { method: "POST", headers: auth(), body: "{}" });
    const result = (await wait.json()) as any;
    expect(result).toMatchObject({ runId: accepted.runId, status: "ok" });
    expect(result.endedAt).toBeGreaterThanOrEqual(result.startedAt);

    const events = ((await (await fetch(`${app.restUrl}/v1/runs/${accepted.runId}/events`, { headers: auth() })).json()) as any).events;
    assertRunEvents(events);
    const end = events[events.length - 1];
    expect(end.data.payloads[0].text).toContain('You said: "hello over rest"');
    expect(end.data.meta).toMatchObject({ offline: true, model: "offline/echo" });

    const history = (await (await fetch(`${app.restUrl}/v1/sessions/rest-session/history`, { headers: auth() })).json()) as any;
    expect(history.messages.map((m: { role: string }) => m.role)).toEqual(["user", "assistant"]);
    expect(history.messages[0].content).toBe("hello over rest");
    // The repeat started nothing new: one run in the session.
    expect(new Set(history.messages.map((m: { runId: string }) => m.runId))).toEqual(new Set([accepted.runId]));
  });

  it("runs a message over WebSocket with streamed lifecycle, assistant and tool events, then agent.wait", async () => {
    const client = await TestWsClient.open(app.webSocketUrl);
    try {
      const hello = await client.request("connect", { auth: { token: app.token } });
      expect(hello).toMatchObject({ ok: true, payload: { type: "hello-ok" } });

      const res = await client.request("agent", { sessionKey: "ws-session", message: "what is 6 * 7?", idempotencyKey: "ws-k1" });
      expect(res).toMatchObject({ ok: true, payload: { status: "accepted", runId: expect.any(String) } });
      const runId = res.payload.runId as string;

      const waited = await client.request("agent.wait", { runId, timeoutMs: 30_000 });
      expect(waited).toMatchObject({ ok: true, payload: { runId, status: "ok" } });

      const end = await client.waitFor((f: Frame) => f.event === "agent" && f.payload?.runId === runId && f.payload?.data?.phase === "end");
      const events = client.agentEvents(runId).map((f) => f.payload);
      assertRunEvents(events);
      expect(events.map((e) => e.seq)).toEqual(client.agentEvents(runId).map((f) => f.seq));
      expect(events.every((e) => typeof e.ts === "number" && e.runId === runId)).toBe(true);
      const tools = events.filter((e) => e.stream === "tool").map((e) => e.data.phase);
      expect(tools).toEqual(["start", "result"]);
      expect(events.find((e) => e.stream === "tool")?.data).toMatchObject({ name: "calculator", args: { expression: "6 * 7" } });
      expect(end.payload.data.payloads).toEqual([{ text: "The result is 42." }]);
    } finally {
      await client.close();
    }
  });
});
