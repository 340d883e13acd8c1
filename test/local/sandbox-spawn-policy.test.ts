import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, describe, expect, it } from "vitest";
import { FunctionPool } from "../../infra/local/lambda/pool";
import { testFunction } from "../support/function-pool";
import { sandboxSoftCap, type SpawnPolicy } from "../../infra/local/lambda/spawn-gate";
import { ProcessCpuGauge, type CpuReading } from "../../infra/local/lambda/cpu-gauge";

// A handler that holds its sandbox until the test writes the file it names, then answers how many calls its sandbox served.
const codeDir = mkdtempSync(join(tmpdir(), "spawn-policy-fn-"));
writeFileSync(
  join(codeDir, "index.mjs"),
  [
    'import { existsSync } from "node:fs";',
    "let calls = 0;",
    "export const handler = async (event) => {",
    "  calls += 1;",
    "  while (event.holdUntil && !existsSync(event.holdUntil)) await new Promise((r) => setTimeout(r, 5));",
    "  return { calls };",
    "};",
  ].join("\n"),
);
afterAll(() => rmSync(codeDir, { recursive: true, force: true }));

const cpu = (saturated: boolean) => ({ saturated: () => saturated });
let files = 0;
const releaseFile = () => join(codeDir, `release-${(files += 1)}`);

function pool(policy: Partial<SpawnPolicy>): FunctionPool {
  return new FunctionPool(
    testFunction("spawn-policy-fn", codeDir),
    () => undefined,
    600_000,
    { softCap: 1, cpu: cpu(true), stallMs: 60_000, ...policy },
  );
}

/**
 * One warm sandbox, then a call that holds it; a second call arrives while it is held.
 * `releaseAfterMs`: the held call is let go that much later; undefined: only after the second call answered.
 */
async function secondWhileHeld(fn: FunctionPool, options: { pauseMs?: number; releaseAfterMs?: number } = {}): Promise<{ calls: number }> {
  const file = releaseFile();
  await fn.invoke({});
  if (options.pauseMs) await sleep(options.pauseMs);
  const held = fn.invoke<{ calls: number }>({ holdUntil: file });
  if (options.releaseAfterMs !== undefined) setTimeout(() => writeFileSync(file, ""), options.releaseAfterMs);
  const second = await fn.invoke<{ calls: number }>({});
  writeFileSync(file, "");
  await held;
  return second;
}

describe("starting a sandbox while every one is busy", () => {
  // The held call is let go only after the second answered: the second can only answer from a new sandbox.
  it.each([
    { when: "under the soft cap, even with the CPU spent (as Lambda would)", policy: { softCap: 2 }, pauseMs: 0 },
    { when: "past the soft cap with CPU to spare, once the last start is two gauge windows old", policy: { cpu: cpu(false) }, pauseMs: 300 },
    { when: "past the soft cap with the CPU spent, when no sandbox came free for stallMs", policy: { stallMs: 150 }, pauseMs: 0 },
  ])("happens $when", async ({ policy, pauseMs }) => {
    const fn = pool(policy);
    try {
      const second = await secondWhileHeld(fn, { pauseMs });
      expect(second.calls).toBe(1);
      expect(fn.coldStarts).toBe(2);
    } finally {
      await fn.close();
    }
  });

  it("waits for the busy sandbox past the soft cap with the CPU spent, and reuses it", async () => {
    const fn = pool({});
    try {
      const second = await secondWhileHeld(fn, { releaseAfterMs: 300 });
      // The warm sandbox's third call: no second sandbox was started
      expect(second.calls).toBe(3);
      expect(fn.coldStarts).toBe(1);
      expect(fn.sandboxCount()).toBe(1);
    } finally {
      await fn.close();
    }
  });
});

describe("ProcessCpuGauge", () => {
  const reading = (wallMs: number, cpuMs: number, loopActive = 0): CpuReading => ({ wallMs, cpuMs, loop: { active: loopActive, idle: wallMs - loopActive } });
  function gauge(readings: CpuReading[], cores = 2) {
    let next = 0;
    return new ProcessCpuGauge(() => readings[Math.min(next++, readings.length - 1)]!, cores);
  }

  it("is spent when the process used at least 85% of all cores over a window", () => {
    const busy = gauge([reading(0, 0), reading(100, 180)]); // 90% of 2 cores
    busy.sample();
    expect(busy.saturated()).toBe(true);
    const room = gauge([reading(0, 0), reading(100, 160)]); // 80%
    room.sample();
    expect(room.saturated()).toBe(false);
  });

  it("is spent when the main thread (every emulator) was busy 90% of a window, whatever the other core did", () => {
    const mainBound = gauge([reading(0, 0), reading(100, 100, 95)]); // 50% of 2 cores, the main loop 95% busy
    mainBound.sample();
    expect(mainBound.saturated()).toBe(true);
    const calm = gauge([reading(0, 0), reading(100, 100, 80)]);
    calm.sample();
    expect(calm.saturated()).toBe(false);
  });

  it("keeps its last figure until a sample closes a window of at least 100 ms", () => {
    const g = gauge([reading(0, 0), reading(100, 190), reading(150, 190), reading(250, 200)]);
    expect(g.saturated()).toBe(false); // no window closed yet
    g.sample();
    expect(g.saturated()).toBe(true);
    g.sample(); // 50 ms: too short to count
    expect(g.saturated()).toBe(true);
    g.sample(); // 150 ms nearly idle
    expect(g.saturated()).toBe(false);
  });
});

describe("LOCAL_SANDBOX_SOFT_CAP", () => {
  it("defaults to two sandboxes per core (at least 2), takes a positive whole number, and refuses anything else", () => {
    expect(sandboxSoftCap({}, 2)).toBe(4);
    expect(sandboxSoftCap({}, 1)).toBe(2);
    expect(sandboxSoftCap({ LOCAL_SANDBOX_SOFT_CAP: " 16 " }, 2)).toBe(16);
    expect(() => sandboxSoftCap({ LOCAL_SANDBOX_SOFT_CAP: "0" }, 2)).toThrow(/positive whole number/);
    expect(() => sandboxSoftCap({ LOCAL_SANDBOX_SOFT_CAP: "4x" }, 2)).toThrow(/positive whole number/);
  });
});
