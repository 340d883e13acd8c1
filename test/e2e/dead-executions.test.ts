/**
 * Issue 16: "The same recovery covers AWS executions that died for an
 * infrastructure reason (States.Runtime, a deleted execution): the sweeper
 * re-drives or ends them promptly", on the template-deployed local stack. The
 * local Step Functions fails the run's execution with States.Runtime as it
 * enters the Attempt task, or loses it there (as if deleted: no event, no
 * record), through the fault-injection layer (infra/local/faults.ts).
 * - States.Runtime: the execution's status-change event reaches the sweeper,
 *   which re-drives the run in `<runId>-r1` (no periodic sweep runs here);
 * - a lost execution sends no event: the next sweep finds the running run
 *   without an execution and re-drives it;
 * - an execution that dies on every re-drive: after MAX_REDRIVES the run ends
 *   at once with a clear error.
 * Each case: one terminal status, the requester's final answer on its
 * socket, the lane released, the model called once (nothing ran twice).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FaultPlan } from "../../infra/local/faults";
import { startLocalStack, type LocalStack } from "../../infra/local/stack";
import { loadAgentConfig } from "../../shared/config/config";
import { runIdForIdempotencyKey } from "../../shared/core/ids";
import { MAX_REDRIVES } from "../../shared/sweeper/dead-runs";
import { endedRun, executionsOf, expectRunInvariants } from "../support/fault-invariants";
import { GatedModel } from "../support/gated-model";
import { STACK_START_TIMEOUT_MS, RUN_END_TIMEOUT_MS } from "../support/timeouts";
import { TestWsClient, type Frame } from "../support/ws-client";

const plan = new FaultPlan();
const model = new GatedModel();
let stack: LocalStack;

beforeAll(async () => {
  const baseURL = await model.start();
  const config = loadAgentConfig({ OPENAI_API_KEY: "test", OPENAI_BASE_URL: baseURL, MODEL: "openai/gpt-4o" });
  stack = await startLocalStack({ config, faults: plan, sweepIntervalMs: 0 });
}, STACK_START_TIMEOUT_MS);
afterAll(async () => {
  await stack?.close();
  await model.close();
});

const isFinalFor = (runId: string) => (f: Frame) => f.type === "res" && f.payload?.runId === runId && f.payload?.status !== "accepted";

/** Sends the tagged message over WebSocket (the requester) and returns its run id and socket. */
async function send(s: string): Promise<{ runId: string; client: TestWsClient }> {
  const client = await TestWsClient.open(stack.webSocketUrl);
  await client.request("connect", { auth: { token: stack.authToken } });
  const res = await client.request("agent", { sessionKey: s, message: `{${s}} hello`, idempotencyKey: `k-${s}` }, RUN_END_TIMEOUT_MS);
  expect(res.payload.runId).toBe(runIdForIdempotencyKey(`k-${s}`));
  return { runId: res.payload.runId, client };
}

describe("executions that died of the service (the local Step Functions fails or loses them)", () => {
  it("States.Runtime entering the Attempt: the execution's event re-drives the run, which answers once", async () => {
    const s = "dead-runtime";
    plan.clear();
    plan.add({ at: "execution", state: "Attempt", executionName: runIdForIdempotencyKey(`k-${s}`), effect: { kind: "runtime_failure" } });
    const { runId, client } = await send(s);
    try {
      const run = await endedRun(stack, runId, { sweep: false }); // no tick: the status-change event alone
      await stack.idle();
      expect(plan.pending, "the fault fired").toBe(0);
      await expectRunInvariants(stack, run, "ok");
      expect(model.answers(s), "the model answered once").toBe(1);
      expect((await executionsOf(stack, runId)).sort()).toEqual([runId, `${runId}-r1`]);
      expect(await client.waitFor(isFinalFor(runId), RUN_END_TIMEOUT_MS)).toMatchObject({ ok: true, payload: { status: "ok" } });
    } finally {
      await client.close();
    }
  }, RUN_END_TIMEOUT_MS);

  it("an execution lost entering the Attempt (no event): the next sweep re-drives the run, which answers once", async () => {
    const s = "dead-lost";
    plan.clear();
    plan.add({ at: "execution", state: "Attempt", executionName: runIdForIdempotencyKey(`k-${s}`), effect: { kind: "lost" } });
    const { runId, client } = await send(s);
    try {
      const run = await endedRun(stack, runId, { sweep: true });
      await stack.idle();
      expect(plan.pending, "the fault fired").toBe(0);
      await expectRunInvariants(stack, run, "ok");
      expect(model.answers(s), "the model answered once").toBe(1);
      // The lost execution is not listed; the one that ran is its re-drive (or, when the run had not been
      // marked running yet, the lane's own start of it again).
      expect(await executionsOf(stack, runId), "one execution ran the run").toHaveLength(1);
      expect(await client.waitFor(isFinalFor(runId), RUN_END_TIMEOUT_MS)).toMatchObject({ ok: true, payload: { status: "ok" } });
    } finally {
      await client.close();
    }
  }, RUN_END_TIMEOUT_MS);

  it(`an execution that dies on every re-drive: after ${MAX_REDRIVES} re-drives the run ends at once with a clear error`, async () => {
    const s = "dead-always";
    plan.clear();
    plan.add({ at: "execution", state: "Attempt", effect: { kind: "runtime_failure" }, times: MAX_REDRIVES + 1 });
    const { runId, client } = await send(s);
    try {
      const run = await endedRun(stack, runId, { sweep: false }); // each death's event alone, no tick
      await stack.idle();
      expect(plan.pending, "every execution died").toBe(0);
      await expectRunInvariants(stack, run, "error");
      expect(run.error).toContain("States.Runtime");
      expect(model.answers(s), "no attempt ran").toBe(0);
      expect(await executionsOf(stack, runId)).toHaveLength(MAX_REDRIVES + 1);
      expect(await client.waitFor(isFinalFor(runId), RUN_END_TIMEOUT_MS)).toMatchObject({ ok: false, payload: { status: "error" } });
    } finally {
      await client.close();
    }
  }, RUN_END_TIMEOUT_MS);
});
