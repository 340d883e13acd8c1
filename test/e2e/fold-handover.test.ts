/**
 * Durability of the folded finalize (shared/run/folded-step.ts) on the
 * template-deployed stack: an Attempt that decides `finalize` finalizes the
 * run inline; when that inline finalize fails (its terminal write throttled
 * past the SDK's retries, or the Attempt killed right before or right after
 * that write), the run still ends exactly once with its answer: one final
 * `res` to its requester, one lifecycle end, the lane handed on once and the
 * session's queued run started. A throttled write hands over to the
 * FinalizeRun state; a killed Attempt goes through RecoverAttempt and the
 * next Attempt completes the ending (the functions the triggers invoked show
 * which path ran).
 *
 * Why "3 throttles" did not reach FinalizeRun: the DynamoDB client's default
 * is 4 tries (maxAttempts 4 in @aws-sdk/client-dynamodb, 3 for other
 * clients), so the 4th try of the terminal write succeeded inline. Not a bug.
 *
 * Nothing waits on timing: the first run's model call is held on a barrier
 * until the second message is queued behind it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FaultPlan, type FaultEffect, type FaultRule } from "../../infra/local/faults";
import { startLocalStack, type LocalStack } from "../../infra/local/stack";
import { loadAgentConfig } from "../../shared/config/config";
import { getLane } from "../../shared/aws/lanes";
import { getRun, TERMINAL_STATUSES, type RunRecord } from "../../shared/aws/runs";
import { readEvents } from "../../shared/aws/event-log";
import { CHAT_PATH, chat, chatStreamBody, FakeOpenAIServer } from "../support/fake-openai-server";
import { barrier } from "../support/scripted-sse-server";
import { TestWsClient } from "../support/ws-client";
import { until } from "../support/until";
import { RUN_END_TIMEOUT_MS, STACK_START_TIMEOUT_MS } from "../support/timeouts";

const plan = new FaultPlan();
let stack: LocalStack;
let oai: FakeOpenAIServer;
const invoked: string[] = [];

beforeAll(async () => {
  oai = await FakeOpenAIServer.start();
  const config = loadAgentConfig({ OPENAI_API_KEY: "test", OPENAI_BASE_URL: oai.baseURL, MODEL: "openai/gpt-4o" });
  // Which functions the triggers invoke: the FinalizeRun state is the only invoker of run-finalize.
  const observe = { aroundInvoke: <R>(key: string, invoke: () => Promise<R>) => (invoked.push(key), invoke()) };
  stack = await startLocalStack({ config, faults: plan, sweepIntervalMs: 0, asyncRetryDelayMs: 50, observe });
}, STACK_START_TIMEOUT_MS);
afterAll(async () => {
  await stack?.close();
  await oai?.close();
});

/** The terminal write: the only UpdateItem that sets `endedAt` (shared/aws/runs.ts markEndedReturning). */
const terminalWrite = (effect: FaultEffect, times = 1): FaultRule => ({
  at: "edge",
  caller: "attempt",
  action: "dynamodb:UpdateItem",
  bodyIncludes: ":endedAt",
  effect,
  times,
});

interface Case {
  name: string;
  rules: FaultRule[];
  /**
   * Which state takes over: FinalizeRun (run-finalize) when the inline finalize threw; RecoverAttempt
   * (decide) when the Attempt died, then the next Attempt finishes the ending (no second model call).
   */
  path: "FinalizeRun" | "RecoverAttempt";
}

const CASES: Case[] = [
  // The DynamoDB client makes 4 tries (its default maxAttempts; 3 throttles are absorbed by the 4th):
  // with 4 the inline finalize gives up and FinalizeRun ends the run with its own tries.
  { name: "terminal write throttled past the SDK retries hands over to FinalizeRun", rules: [terminalWrite({ kind: "throttle" }, 4)], path: "FinalizeRun" },
  { name: "attempt killed after its finalize decision, before the terminal write", rules: [terminalWrite({ kind: "kill", when: "before" })], path: "RecoverAttempt" },
  { name: "attempt killed right after the terminal write", rules: [terminalWrite({ kind: "kill", when: "after" })], path: "RecoverAttempt" },
];

async function post(body: Record<string, unknown>): Promise<Record<string, unknown>> {
  const response = await fetch(`${stack.restUrl}/v1/agent`, {
    method: "POST",
    headers: { authorization: `Bearer ${stack.authToken}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(202);
  return (await response.json()) as Record<string, unknown>;
}

const ended = (runId: string) =>
  until<RunRecord>(async () => {
    const run = await getRun(stack.deps.db, runId);
    // No sweeper tick: the run must end, and hand its lane on, by itself.
    return run && TERMINAL_STATUSES.has(run.status) ? run : undefined;
  }, `run ${runId} to end`, RUN_END_TIMEOUT_MS);

async function expectOneEnding(runId: string): Promise<void> {
  const log = await readEvents(stack.deps.db, runId);
  expect(log.map((e) => e.seq)).toEqual(log.map((_, i) => i + 1));
  expect(log.filter((e) => e.stream === "lifecycle" && e.data.phase === "start")).toHaveLength(1);
  expect(log.filter((e) => e.stream === "lifecycle" && (e.data.phase === "end" || e.data.phase === "error"))).toHaveLength(1);
  expect(log[log.length - 1].stream).toBe("lifecycle");
}

describe("the inline finalize hands over when it fails", () => {
  for (const [index, c] of CASES.entries()) {
    it(c.name, async () => {
      plan.clear();
      const sessionKey = `fold-${index}`;
      const hold = barrier();
      const modelCalls = oai.requests.length;
      const invokedBefore = invoked.length;
      oai.enqueue({ kind: "sse", path: CHAT_PATH, body: chatStreamBody({ text: `first answer ${index}` }), gate: hold.promise }, chat.text(`second answer ${index}`));
      const client = await TestWsClient.open(stack.webSocketUrl);
      await client.request("connect", { auth: { token: stack.authToken } });
      const first = await client.request("agent", { sessionKey, message: "first", idempotencyKey: `k1-${sessionKey}` });
      const firstId = first.payload.runId as string;
      // The first run is mid model call: the second message waits in the lane behind it.
      await until(async () => (oai.requests.length > modelCalls ? true : undefined), "the first run's model call");
      const second = await post({ sessionKey, message: "second", idempotencyKey: `k2-${sessionKey}`, queue: { mode: "followup" } });
      expect(second.status).toBe("queued");
      const secondId = String(second.runId);
      plan.add(...c.rules);
      hold.release();

      const run = await ended(firstId);
      const next = await ended(secondId);
      await stack.idle();
      expect(plan.pending, "every fault fired").toBe(0);
      const tasks = (key: string) => invoked.slice(invokedBefore).filter((each) => each === key).length;
      expect(tasks("run-finalize"), "FinalizeRun tasks").toBe(c.path === "FinalizeRun" ? 1 : 0);
      expect(tasks("decide"), "RecoverAttempt tasks").toBe(c.path === "RecoverAttempt" ? 1 : 0);
      expect(run.status).toBe("ok");
      expect(run.result?.payloads.map((p) => p.text)).toEqual([`first answer ${index}`]);
      expect(next.status).toBe("ok");
      expect(next.result?.payloads.map((p) => p.text)).toEqual([`second answer ${index}`]);
      // Each run's model call ran once: the queued run started once, nothing was redone.
      expect(oai.requests.length - modelCalls).toBe(2);
      await expectOneEnding(firstId);
      await expectOneEnding(secondId);
      // One final answer to the requester.
      await client.waitFor((f) => f.type === "res" && f.payload?.runId === firstId && f.payload?.status !== "accepted");
      const finals = client.frames.filter((f) => f.type === "res" && f.payload?.runId === firstId && f.payload?.status !== "accepted");
      expect(finals).toHaveLength(1);
      expect(finals[0].payload.status).toBe("ok");
      await client.close();
      // The lane was handed on once and is free now.
      const lane = await getLane(stack.deps.db, sessionKey);
      expect(lane.activeRunId).toBeUndefined();
      expect(lane.waiting).toHaveLength(0);
      expect(next.startedAt!).toBeGreaterThanOrEqual(run.endedAt!);
    }, 300_000);
  }
});
