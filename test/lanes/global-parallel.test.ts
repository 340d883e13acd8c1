/**
 * The global lane under real concurrency, without Step Functions: every
 * session's first message dispatched at once, runs finished by 16 parallel
 * "executions" at random moments. The semaphore must never let a ninth run
 * start while eight are running, and every run must start exactly once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { slotHolders } from "../../shared/aws/global-lane";
import { getRun } from "../../shared/aws/runs";
import { admitRun } from "../../shared/lanes/pump";
import { LaneHarness } from "./harness";
import { FakeExecutions, sleep, Tables, testConfig } from "./support";

let tables: Tables;
beforeAll(async () => {
  tables = await Tables.start();
});
afterAll(async () => tables?.close());

const CAP = 8;
/** 200 with LANES_PARALLEL_SESSIONS=200 (about a minute on dynalite); 24 by default. */
const SESSIONS = Number(process.env.LANES_PARALLEL_SESSIONS ?? 24);

/** Every created execution is handed to the workers; `running` = created and not yet ended. */
class WatchedExecutions extends FakeExecutions {
  readonly running = new Set<string>();
  readonly ready: string[] = [];
  maxRunning = 0;
  override async start(runId: string) {
    const before = this.created.length;
    const out = await super.start(runId);
    if (this.created.length > before) {
      // A new execution (a repeated start of the same name creates none).
      this.running.add(runId);
      this.maxRunning = Math.max(this.maxRunning, this.running.size);
      this.ready.push(runId);
    }
    return out;
  }
}

describe(`global lane, ${SESSIONS} sessions at once`, () => {
  it(`never runs more than ${CAP} and starts every run exactly once`, async () => {
    // Prepare
    const h = new LaneHarness(await tables.fresh(), testConfig({ globalCap: CAP }));
    const executions = new WatchedExecutions();
    Object.assign(h, { executions });
    const accepted = [];
    for (let i = 0; i < SESSIONS; i += 50) {
      accepted.push(...(await Promise.all(Array.from({ length: Math.min(50, SESSIONS - i) }, (_, j) => h.accept(`par-${i + j}`, "hello")))));
    }
    // Act: every pointer dispatched at once; 16 workers end runs as they start.
    const finished = new Set<string>();
    const workers = Array.from({ length: 16 }, async () => {
      while (finished.size < SESSIONS) {
        const runId = executions.ready.shift();
        if (!runId) {
          await sleep(2);
          continue;
        }
        await sleep(Math.random() * 10);
        await h.start(runId);
        executions.running.delete(runId);
        await h.finish(runId);
        finished.add(runId);
      }
    });
    await Promise.all(accepted.map(async (a) => admitRun(h.deps, (await getRun(h.db, a.runId))!)));
    await Promise.race([Promise.all(workers), sleep(60_000).then(() => Promise.reject(new Error(`stuck at ${finished.size} finished`)))]);
    // Assess
    expect(executions.maxRunning).toBeLessThanOrEqual(CAP);
    expect(executions.maxRunning).toBeGreaterThan(1);
    expect(new Set(executions.created).size).toBe(SESSIONS);
    expect(executions.created).toHaveLength(SESSIONS);
    expect(await slotHolders(h.db)).toEqual({});
  }, 90_000);
});
