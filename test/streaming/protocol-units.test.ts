import { describe, expect, it } from "vitest";
import type { RunEvent } from "../../shared/aws/event-log";
import type { PushOutcome } from "../../shared/aws/push";
import type { RunRecord } from "../../shared/aws/runs";
import { newPostConnectEvent, postChallenge } from "../../shared/events/challenge";
import { framesForEvent } from "../../shared/events/frames";
import { finalResponseFrame } from "../../shared/protocol/agent-final";
import { frameBytes } from "../../shared/protocol/chunks";
import { ApiError } from "../../shared/protocol/errors";
import { MAX_FRAME_BYTES } from "../../shared/protocol/limits";
import { sessionKeyOf, toAgentRequest } from "../../shared/protocol/ws-agent";
import type { Db } from "../../shared/aws/dynamo";

const run = (over: Partial<RunRecord>): RunRecord => ({
  v: 1, runId: "run_1", sessionKey: "main", sessionId: "s", message: "hi", requestHash: "h", source: "ws",
  status: "ok", model: "offline/echo", timeoutMs: 0, acceptedAt: 1, ...over,
});

const event = (stream: RunEvent["stream"], data: Record<string, unknown>, seq = 4): RunEvent => ({ v: 1, runId: "run_1", sessionKey: "main", seq, stream, ts: 99, data });

describe("final agent answer", () => {
  it("ok: the reply payloads and meta, OpenClaw's shape", () => {
    const frame = finalResponseFrame("2:abc", run({ result: { payloads: [{ text: "pong" }], meta: { durationMs: 5 } } }));
    expect(frame).toEqual({
      type: "res", id: "2:abc", ok: true,
      payload: { runId: "run_1", sessionKey: "main", agentId: "main", status: "ok", summary: "completed", result: { payloads: [{ text: "pong", mediaUrl: null }], meta: { durationMs: 5 } } },
    });
  });

  it.each([
    ["error", "UNAVAILABLE"],
    ["timeout", "TIMEOUT"],
    ["aborted", "ABORTED"],
  ] as const)("%s: ok:false with code %s and the run's error as summary and message", (status, code) => {
    const frame = finalResponseFrame("2:x", run({ status, error: "it broke" }));
    expect(frame).toMatchObject({ ok: false, payload: { status, summary: "it broke" }, error: { code, message: "it broke" } });
  });

  it("fits one frame for a client that cannot reassemble chunks: meta first, then the text", () => {
    const huge = run({ result: { payloads: [{ text: "a".repeat(60_000) }, { text: "b".repeat(20_000) }], meta: { big: "m".repeat(10_000) } } });
    const fitted = finalResponseFrame("2:x", huge, MAX_FRAME_BYTES) as { payload: { result: { payloads: { text: string }[]; meta: unknown } } };
    expect(frameBytes(fitted)).toBeLessThanOrEqual(MAX_FRAME_BYTES);
    expect(fitted.payload.result.meta).toEqual({ truncated: true });
    expect(fitted.payload.result.payloads[0]?.text.startsWith("aaaa")).toBe(true);
    expect(fitted.payload.result.payloads[1]?.text.endsWith("bbbb")).toBe(true);
    const small = run({ result: { payloads: [{ text: "pong" }], meta: { a: 1 } } });
    expect(finalResponseFrame("2:x", small, MAX_FRAME_BYTES)).toEqual(finalResponseFrame("2:x", small));
  });
});

describe("frames for a logged event", () => {
  it("adds agentId, and derives chat delta / final / error", () => {
    expect(framesForEvent(event("assistant", { text: "Hello wor", delta: "wor" }))).toEqual([
      { type: "event", event: "agent", seq: 4, payload: { runId: "run_1", sessionKey: "main", seq: 4, stream: "assistant", ts: 99, data: { text: "Hello wor", delta: "wor" }, agentId: "main" } },
      { type: "event", event: "chat", seq: 4, payload: { runId: "run_1", sessionKey: "main", agentId: "main", seq: 4, state: "delta", deltaText: "wor", message: { role: "assistant", content: [{ type: "text", text: "Hello wor" }], timestamp: 99 } } },
    ]);
    const end = framesForEvent(event("lifecycle", { phase: "end", payloads: [{ text: "a" }, { text: "b" }], meta: { stopReason: "stop" } }));
    expect(end[1]).toMatchObject({ event: "chat", payload: { state: "final", stopReason: "stop", message: { content: [{ text: "a\n\nb" }] } } });
    const failed = framesForEvent(event("lifecycle", { phase: "error", error: "LLM request failed." }));
    expect(failed[1]).toMatchObject({ event: "chat", payload: { state: "error", errorMessage: "LLM request failed." } });
    expect(framesForEvent(event("tool", { phase: "start" }))).toHaveLength(1);
    expect(framesForEvent(event("lifecycle", { phase: "start" }))).toHaveLength(1);
  });
});

describe("agent params (ours and OpenClaw's)", () => {
  it("resolves the session key like OpenClaw", () => {
    expect(sessionKeyOf({ sessionKey: "k", sessionId: "s1" })).toBe("k");
    expect(sessionKeyOf({ sessionId: "s1" })).toBe("agent:main:explicit:s1");
    expect(sessionKeyOf({})).toBe("agent:main:main");
  });

  it("maps the CLI's params onto the intake request", () => {
    expect(toAgentRequest({ message: "Say pong", sessionId: "proto-a1", deliver: false, timeout: 600, idempotencyKey: "k", thinking: "low", extraSystemPrompt: "Be brief." })).toEqual({
      sessionKey: "agent:main:explicit:proto-a1", message: "Say pong", idempotencyKey: "k", timeoutSeconds: 600, thinking: "low", extraSystemPrompt: "Be brief.",
    });
    expect(toAgentRequest({ message: "x", timeout: 0 })).toEqual({ sessionKey: "agent:main:main", message: "x" });
    expect(() => toAgentRequest({ message: "x", agentId: "ops" })).toThrow(ApiError);
  });
});

describe("connect.challenge delivery", () => {
  it("retries until the connection is usable, then stops", async () => {
    const outcomes: PushOutcome[] = ["gone", "gone", "sent"];
    const sent: unknown[] = [];
    const pusher = { push: async (_id: string, frame: unknown) => (sent.push(frame), outcomes.shift() ?? "sent"), disconnect: async () => undefined };
    const step = newPostConnectEvent("c1", 1234);
    const delivered = await postChallenge({ db: {} as Db, pusher, sleep: async () => undefined }, step);
    expect(delivered).toBe(true);
    expect(sent).toHaveLength(3);
    expect(sent[2]).toEqual({ type: "event", event: "connect.challenge", payload: { nonce: step.nonce, ts: 1234 } });
  });
});
