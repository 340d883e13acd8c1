import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listAttempts } from "../../shared/aws/attempts";
import { createRun } from "../../shared/aws/runs";
import { resolveSession } from "../../shared/aws/sessions";
import { readTranscript } from "../../shared/aws/transcript";
import { loadAgentConfig } from "../../shared/config/config";
import { attemptStep, YIELD_MARGIN_MS } from "../../shared/run/attempt-step";
import { silentLog, type RunDeps } from "../../shared/run/deps";
import { startRun } from "../../shared/run/start-run";
import { chat, FakeOpenAIServer } from "../support/fake-openai-server";
import { startTestDb, type TestDb } from "../support/local-db";

/**
 * The attempt Lambda stays under its 15-minute limit: when less than
 * YIELD_MARGIN_MS is left it stops at the next model/tool boundary with every
 * turn persisted and returns a `continue`; the next task picks up from the
 * committed transcript.
 */
let t: TestDb;
let oai: FakeOpenAIServer;
let deps: RunDeps;

beforeAll(async () => {
  t = await startTestDb();
  oai = await FakeOpenAIServer.start();
  deps = {
    db: t.db,
    pusher: { push: async () => "gone" as never, disconnect: async () => undefined },
    config: loadAgentConfig({ OPENAI_BASE_URL: oai.baseURL, OPENAI_API_KEY: "sk-test" }),
    executions: { start: async () => ({ alreadyStarted: false }) },
    log: silentLog,
  };
});
afterAll(async () => {
  await oai.close();
  await t.close();
});

describe("yield before the Lambda deadline", () => {
  it("stops after the committed tool turn when the clock runs low, then a fresh task finishes the run", async () => {
    const { sessionId } = await resolveSession(t.db, "yield-session");
    await createRun(t.db, {
      v: 1,
      runId: "run-yield",
      sessionKey: "yield-session",
      sessionId,
      message: "Compute 6*7",
      requestHash: "h",
      source: "rest",
      status: "accepted",
      model: "openai/gpt-4.1-mini",
      timeoutMs: 0,
      acceptedAt: t.db.now(),
    });
    const start = await startRun(deps, "run-yield");
    oai.enqueue(chat.toolCall("calculator", { expression: "6 * 7" }, "call_y1"), chat.text("42."));

    // 14 minutes left when the attempt starts; after the first model call, less than the margin.
    const lowClock = { remainingMs: () => (oai.requests.length === 0 ? 14 * 60_000 : YIELD_MARGIN_MS - 1) };
    const yielded = await attemptStep(deps, start, lowClock);
    expect(yielded.decision.action).toBe("attempt");
    expect(oai.requests).toHaveLength(1);
    expect((await readTranscript(t.db, sessionId)).map((e) => e.message.role)).toEqual(["user", "assistant", "tool_result"]);
    expect((await listAttempts(t.db, "run-yield"))[0].outcome).toEqual({ kind: "yielded" });

    const done = await attemptStep(deps, yielded, { remainingMs: () => 14 * 60_000 });
    expect(done.decision).toMatchObject({ action: "finalize", status: "ok" });
    expect((await readTranscript(t.db, sessionId)).map((e) => e.message.role)).toEqual(["user", "assistant", "tool_result", "assistant"]);
    expect(oai.requests).toHaveLength(2);
  });
});
