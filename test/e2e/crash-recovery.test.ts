/**
 * `npm start` killed with `kill -9` mid-work and started again with the same
 * DATA_DIR (issue 16): runs that were streaming continue as a fresh attempt,
 * queued follow-ups run after them in acceptance order, messages posted just
 * before the kill run, none runs twice, event seqs continue.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CrashModelServer } from "../support/crash-model-server";
import { startLikeNpmStart, type StartedApp } from "../support/npm-start";

let model: CrashModelServer;
let dataDir: string;
let app: StartedApp | undefined;
const env = () => ({ MODEL: "openai/gpt-4.1-mini", OPENAI_API_KEY: "sk-test-crash", OPENAI_BASE_URL: model.baseURL });

beforeAll(async () => {
  model = await CrashModelServer.start();
  dataDir = mkdtempSync(join(tmpdir(), "agent-runner-crash-"));
});
afterAll(async () => {
  await app?.stop();
  await model?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const headers = () => ({ authorization: `Bearer ${app!.token}`, "content-type": "application/json" });

async function post(sessionKey: string, message: string, queue?: Record<string, unknown>): Promise<{ runId: string; status: string }> {
  const body = JSON.stringify({ sessionKey, message, idempotencyKey: `k-${message}`, ...(queue ? { queue } : {}) });
  const res = await fetch(`${app!.restUrl}/v1/agent`, { method: "POST", headers: headers(), body });
  expect(res.status).toBe(202);
  return (await res.json()) as { runId: string; status: string };
}

async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function waitEnded(runId: string): Promise<any> {
  for (let i = 0; i < 20; i += 1) {
    const res = await fetch(`${app!.restUrl}/v1/runs/${runId}/wait`, { method: "POST", headers: headers(), body: JSON.stringify({ timeoutMs: 20_000 }) });
    const result = (await res.json()) as { status: string };
    if (result.status !== "timeout") return (await (await fetch(`${app!.restUrl}/v1/runs/${runId}`, { headers: headers() })).json()) as any;
  }
  throw new Error(`run ${runId} did not end`);
}

async function events(runId: string): Promise<{ seq: number; stream: string; data: Record<string, unknown> }[]> {
  return ((await (await fetch(`${app!.restUrl}/v1/runs/${runId}/events`, { headers: headers() })).json()) as any).events;
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  return (content as { type: string; text?: string }[]).map((block) => block.text ?? "").join("");
}

describe("npm start survives kill -9", () => {
  it("continues streaming runs, runs queued and just-posted messages once each, in acceptance order", async () => {
    app = await startLikeNpmStart(env(), { dataDir });
    const streaming = ["stream-a", "stream-b", "stream-c"].map((session) => ({ session, message: `first message of ${session}` }));
    const runs = new Map<string, string>();
    for (const { session, message } of streaming) runs.set(message, (await post(session, message)).runId);
    await until(() => streaming.every(({ message }) => model.requestsFor(message).length > 0), "every streaming run to call the model");
    await until(async () => (await events(runs.get(streaming[0].message)!)).some((e) => e.stream === "assistant"), "a streamed delta in the log");

    const followups = ["second message of stream-a", "third message of stream-a"];
    for (const message of followups) {
      const accepted = await post("stream-a", message, { mode: "followup" });
      expect(accepted.status).toBe("queued");
      runs.set(message, accepted.runId);
    }
    const late = ["late message of late-d", "late message of late-e"];
    for (const [i, message] of late.entries()) runs.set(message, (await post(`late-${"de"[i]}`, message)).runId);
    const seqsBefore = new Map<string, number>();
    for (const { message } of streaming) seqsBefore.set(message, (await events(runs.get(message)!)).length);

    await app.kill();
    model.mode = "answer";
    app = await startLikeNpmStart(env(), { dataDir });

    for (const [message, runId] of runs) {
      const run = await waitEnded(runId);
      expect(run, message).toMatchObject({ runStatus: "ok" });
      expect(run.result.payloads.map((p: { text: string }) => p.text).join("")).toBe(`Answer to: ${message}`);
      // None runs twice: exactly one model request answered each message.
      expect(model.requestsFor(message).filter((r) => r.mode === "answer"), message).toHaveLength(1);
      const log = await events(runId);
      // The log kept what was written before the kill and the sequence went on without a gap.
      expect(log.map((e) => e.seq)).toEqual(log.map((_, i) => i + 1));
      expect(log.filter((e) => e.stream === "lifecycle" && e.data.phase === "start")).toHaveLength(1);
      expect(log[log.length - 1]).toMatchObject({ stream: "lifecycle", data: { phase: "end" } });
      if (seqsBefore.has(message)) expect(log.length).toBeGreaterThan(seqsBefore.get(message)!);
    }

    // Follow-ups ran after the run they queued behind, in acceptance order, each message once.
    const history = (await (await fetch(`${app.restUrl}/v1/sessions/stream-a/history`, { headers: headers() })).json()) as any;
    const texts = history.messages.map((m: { role: string; content: unknown }) => `${m.role}:${textOf(m.content)}`);
    const expected = [streaming[0].message, ...followups].flatMap((message) => [`user:${message}`, `assistant:Answer to: ${message}`]);
    expect(texts).toEqual(expected);
  }, 400_000);
});
