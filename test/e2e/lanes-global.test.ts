/**
 * Issue 6, "How to prove it": 200 sessions in parallel under a global cap of
 * 8 never have more than 8 runs executing, and every run still completes.
 *
 * The local stack runs every Lambda and DynamoDB in this one process (about
 * 2-3 runs a second under load), so 200 sessions take about 90 s: the
 * default suite runs 48 (six rounds of the cap), `LANES_E2E_SESSIONS=200`
 * runs the full proof. test/lanes/global-parallel.test.ts puts 200 sessions
 * through the same lane code concurrently in a few seconds.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLocalStack, type LocalStack } from "../../infra/local/stack";
import { slotHolders } from "../../shared/aws/global-lane";
import { loadAgentConfig } from "../../shared/config/config";
import { allEnded, maxConcurrency, postAgent } from "./lanes-support";

const CAP = 8;
const SESSIONS = Number(process.env.LANES_E2E_SESSIONS ?? 48);

let stack: LocalStack;
beforeAll(async () => {
  const config = loadAgentConfig({});
  stack = await startLocalStack({ config: { ...config, lanes: { ...config.lanes, globalCap: CAP } }, sweepIntervalMs: 0 });
}, 60_000);
afterAll(async () => stack?.close());

describe("global lane", () => {
  it(`${SESSIONS} sessions at once never run more than ${CAP} at a time, and all complete`, async () => {
    // Act: one first message per session, 25 in flight at a time; meanwhile sample the semaphore.
    let sampledMax = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        sampledMax = Math.max(sampledMax, Object.keys(await slotHolders(stack.deps.db)).length);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    const runIds: string[] = [];
    const keys = Array.from({ length: SESSIONS }, (_, i) => `global-${i}`);
    for (let i = 0; i < keys.length; i += 25) {
      const batch = await Promise.all(keys.slice(i, i + 25).map((sessionKey) => postAgent(stack, { sessionKey, message: `hello from ${sessionKey}` })));
      for (const posted of batch) {
        expect(posted.body.status).toBe("accepted");
        runIds.push(posted.body.runId);
      }
    }
    const runs = await allEnded(stack, runIds, 240_000);
    sampling = false;
    await sampler;

    // Assess
    expect(runs.filter((run) => run.status !== "ok")).toEqual([]);
    const concurrency = maxConcurrency(runs);
    console.log(`lanes-global: ${JSON.stringify({ sessions: SESSIONS, cap: CAP, maxExecuting: concurrency, maxSlotsHeld: sampledMax })}`);
    expect(concurrency).toBeLessThanOrEqual(CAP);
    expect(sampledMax).toBeLessThanOrEqual(CAP);
    expect(concurrency).toBeGreaterThan(1); // it did run in parallel
    expect(await slotHolders(stack.deps.db)).toEqual({});
  }, 300_000);
});
