/**
 * Whether the local stack's CPU is spent: what a sandbox pool asks before
 * starting a sandbox past its soft cap (pool.ts). Two ways to be spent:
 * - the process uses nearly every core (`process.cpuUsage()` counts all of
 *   its threads, every sandbox included);
 * - the main thread is busy nearly all the time (its event loop
 *   utilization): it runs every emulator (DynamoDB, SQS, Step Functions, the
 *   API Gateway, the IAM edge), which every invocation waits on, and as one
 *   thread it can use one core at most, so on 2 cores it saturates at 50%
 *   of the process's CPU. More sandboxes then only queue more calls on it.
 */
import { availableParallelism } from "node:os";
import { performance, type EventLoopUtilization } from "node:perf_hooks";

export interface CpuGauge {
  saturated(): boolean;
}

export interface CpuReading {
  wallMs: number;
  /** User + system CPU time of the whole process (all threads) so far. */
  cpuMs: number;
  /** The main thread's event loop: time active and idle so far (performance.eventLoopUtilization()). */
  loop: Pick<EventLoopUtilization, "active" | "idle">;
}

/** Share of all cores the process must be using to count as saturated. */
export const SATURATED_SHARE = 0.85;
/** Share of the time the main thread's event loop must be busy to count as saturated. */
export const SATURATED_LOOP = 0.9;
/** One reading spans this much wall time at least: shorter ones are noise. */
export const WINDOW_MS = 100;

/** This process's CPU and main-thread event loop so far (the bench's throughput figure reads it too). */
export function readProcess(): CpuReading {
  const { user, system } = process.cpuUsage();
  const { active, idle } = performance.eventLoopUtilization();
  return { wallMs: performance.now(), cpuMs: (user + system) / 1000, loop: { active, idle } };
}

/**
 * The process's CPU use over its last window, as a share of all cores, and
 * the main thread's event loop utilization over the same window.
 * `start()` samples on an unref'd timer, so the figure is always about the
 * last 100 ms, never an average over a long quiet stretch.
 */
export class ProcessCpuGauge implements CpuGauge {
  private last: CpuReading;
  private share = 0;
  private loopShare = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly read: () => CpuReading = readProcess,
    private readonly cores: number = availableParallelism(),
  ) {
    this.last = read();
  }

  start(): this {
    this.timer ??= setInterval(() => this.sample(), WINDOW_MS).unref();
    return this;
  }

  /** Closes a window when at least WINDOW_MS has passed since the last one. */
  sample(): void {
    const now = this.read();
    const wall = now.wallMs - this.last.wallMs;
    if (wall < WINDOW_MS) return;
    this.share = (now.cpuMs - this.last.cpuMs) / (wall * this.cores);
    const active = now.loop.active - this.last.loop.active;
    const idle = now.loop.idle - this.last.loop.idle;
    this.loopShare = active + idle > 0 ? active / (active + idle) : 0;
    this.last = now;
  }

  saturated(): boolean {
    return this.share >= SATURATED_SHARE || this.loopShare >= SATURATED_LOOP;
  }
}

let shared: ProcessCpuGauge | undefined;
/** The gauge of this process (started on first use): every pool reads the same CPU. */
export const processCpu: CpuGauge = { saturated: () => (shared ??= new ProcessCpuGauge().start()).saturated() };
