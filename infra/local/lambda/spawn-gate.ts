/**
 * How many sandboxes a local function pool starts (pool.ts asks `SpawnGate`
 * before it starts one for an invocation that found every sandbox busy).
 */
import { availableParallelism } from "node:os";
import { processCpu, WINDOW_MS, type CpuGauge } from "./cpu-gauge";

/**
 * When a pool starts one more sandbox for an invocation that finds every one
 * busy. In AWS each invocation gets its own execution environment and CPU;
 * here every sandbox shares the machine's cores with each other and with the
 * emulators. Past a few sandboxes per core, one more adds no CPU: it adds a
 * cold start and one more isolate whose code is compiled and optimized
 * again, and it takes CPU from the emulators every invocation waits on.
 * Measured on 2 cores, 100 sessions at once, 3 runs each (`npm run bench --
 * --only=throughput --levels=100x3`, docs/local-deploy.md): 3.6 runs/s with
 * up to 16 sandboxes per function started freely, 6.1 with a hard cap of 8,
 * 9.1 with a hard cap of 4, and 9.0 with this policy, which unlike a hard cap
 * still gives long waits and slow models a sandbox each.
 *
 * So up to `softCap` sandboxes start freely. Past it, one more starts only
 * while the CPU has room (`cpu`, cpu-gauge.ts: the cores, or the main thread
 * that runs every emulator, not spent over the last 100 ms), at most one per
 * two gauge windows so each new sandbox's effect is seen before the next;
 * otherwise the invocation waits for a busy sandbox to come free. It never
 * waits on a function whose sandboxes have all been held for `stallMs`
 * without one coming free (long `agent.wait`s on a machine busy with other
 * work): one more starts. Nothing past `maxConcurrency`, ever.
 */
export interface SpawnPolicy {
  softCap: number;
  cpu: CpuGauge;
  stallMs: number;
}

/** How long a function's sandboxes may all stay held, none coming free, before one more starts whatever the CPU. */
export const SANDBOX_STALL_MS = 10_000;

/**
 * LOCAL_SANDBOX_SOFT_CAP (a positive whole number) when set, else two per
 * core (at least 2). A soft cap at or above a function's maxConcurrency
 * starts sandboxes as Lambda would, at once.
 */
export function sandboxSoftCap(env: NodeJS.ProcessEnv = process.env, cores = availableParallelism()): number {
  const raw = env.LOCAL_SANDBOX_SOFT_CAP?.trim();
  if (!raw) return Math.max(2, 2 * cores);
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`LOCAL_SANDBOX_SOFT_CAP must be a positive whole number of sandboxes, got ${JSON.stringify(raw)}`);
  return value;
}

/** While waiting past the soft cap, how often the pool looks again (a release wakes it at once). */
export const RECHECK_MS = 50;

export function defaultSpawnPolicy(): SpawnPolicy {
  return { softCap: sandboxSoftCap(), cpu: processCpu, stallMs: SANDBOX_STALL_MS };
}

/** One function's side of the policy: when its sandboxes last came free or started, and whether an invocation waits. */
export class SpawnGate {
  /** When a sandbox last came free or finished its cold start: a function whose sandboxes keep coming free is worth waiting for. */
  private lastProgressAt = 0;
  private lastSpawnAt = 0;

  constructor(private readonly policy: SpawnPolicy) {}

  noteProgress(): void {
    this.lastProgressAt = Date.now();
  }

  noteSpawn(): void {
    this.lastProgressAt = this.lastSpawnAt = Date.now();
  }

  /** Past the soft cap, with the CPU busy or a sandbox just started, and this function's sandboxes still coming free: wait for one. */
  waits(sandboxCount: number): boolean {
    if (sandboxCount < this.policy.softCap) return false;
    const now = Date.now();
    if (now - this.lastProgressAt >= this.policy.stallMs) return false;
    return this.policy.cpu.saturated() || now - this.lastSpawnAt < 2 * WINDOW_MS;
  }
}
