/**
 * The local stack's memory, idle to idle: resident set size of `npm start`
 * (the process and every child it spawned; worker threads are part of the
 * process) sampled only when the stack is idle: after start, after a warm-up
 * and after each block of runs (built-in offline model, a fresh session per
 * run, `lanes` sessions at a time). Samples taken while runs are in flight
 * measure busy sandboxes and uncollected garbage, not what the stack keeps.
 *
 * Idle means: the `npm start` child runs with LOCAL_SANDBOX_IDLE_MS short (every
 * idle sandbox is stopped soon after the traffic ends) and
 * LOCAL_MEMORY_DIAGNOSTICS=1 (infra/local/memory-diagnostics.ts: a SIGUSR2 runs a
 * full GC of the main thread and prints the sandboxes alive); the phase
 * signals until no sandbox is alive, then reads RSS. Read from /proc (Linux);
 * elsewhere the figure is reported as unavailable.
 */
import type { ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { MEMORY_DIAGNOSTICS_PREFIX, type MemoryDiagnostics } from "../../infra/local/memory-diagnostics";
import { TestWsClient } from "../../test/support/ws-client";
import { driveRun } from "../harness";
import { startApp, stopApp, type Started } from "./foundation";

export interface MemoryOptions {
  /** Runs before the first measured block (warms sandboxes, caches, the bounded stores). */
  warmupRuns: number;
  /** Runs per measured block. */
  blockRuns: number;
  blocks: number;
  /** Sessions driven at once. */
  lanes: number;
  /** LOCAL_SANDBOX_IDLE_MS of the `npm start` child. */
  sandboxIdleMs: number;
  /** Quiet time after the traffic before the first idle poll (trailing invocations drain). */
  settleMs: number;
  /** Give up waiting for every sandbox to stop after this long (the sample is then marked). */
  idleTimeoutMs: number;
}

export interface IdleSample {
  label: string;
  /** Runs done when the sample was taken. */
  runs: number;
  /** RSS of the process tree, MB. */
  mb: number;
  /** The main thread after its GC, and the sandboxes alive (0 unless the wait timed out). */
  main: MemoryDiagnostics;
  /** From the end of the traffic to the sample. */
  waitedMs: number;
}

export interface MemoryBlock {
  runs: number;
  failures: number;
  runMs: number;
  idleBeforeMb: number;
  idleAfterMb: number;
  /** (idle after - idle before) / runs x 1,000. */
  growthMbPer1000Runs: number;
}

export interface MemoryResult {
  /** 2: idle to idle (this shape). 1 (no field) sampled while runs were in flight. */
  version: 2;
  available: boolean;
  lanes: number;
  sandboxIdleMs: number;
  warmup: { runs: number; failures: number; runMs: number };
  idle: IdleSample[];
  blocks: MemoryBlock[];
  /** All runs, warm-up included. */
  runs: number;
  idleAfterStartMb: number;
  /** The last idle sample. */
  idleAfterRunsMb: number;
  /** The largest block's growth, for the record: two idle samples each, so it carries both samples' noise. */
  growthMbPer1000Runs: number;
  /**
   * Least-squares slope of the idle samples from the warm-up's on, per 1,000
   * runs: the growth per run the goal asks for. One idle sample moves by
   * several MB from the next (a block can even shrink), and the slope over
   * every sample after the warm-up averages that out instead of taking the
   * worst pair.
   */
  slopeMbPer1000Runs: number;
  failures: number;
  runMs: number;
}

export async function measureMemory(options: MemoryOptions): Promise<MemoryResult> {
  const app = await startApp({ env: { LOCAL_SANDBOX_IDLE_MS: String(options.sandboxIdleMs), LOCAL_MEMORY_DIAGNOSTICS: "1" } });
  const pid = app.child.pid!;
  const diagnostics = diagnosticsOf(app.child);
  const idle: IdleSample[] = [];
  const sample = async (label: string, runs: number) => {
    const began = performance.now();
    await sleep(options.settleMs);
    const main = await untilNoSandbox(diagnostics, options.idleTimeoutMs);
    const taken: IdleSample = { label, runs, mb: rssMb(pid), main, waitedMs: Math.round(performance.now() - began) };
    idle.push(taken);
    return taken;
  };
  try {
    const available = existsSync(`/proc/${pid}/status`);
    await sample("after start", 0);
    const clients: TestWsClient[] = [];
    try {
      for (let lane = 0; lane < options.lanes; lane += 1) clients.push(await connect(app));
      const warmup = await timed(() => driveLanes(clients, 0, options.warmupRuns));
      let done = options.warmupRuns;
      let before = await sample("after warm-up", done);
      const blocks: MemoryBlock[] = [];
      for (let block = 1; block <= options.blocks; block += 1) {
        const ran = await timed(() => driveLanes(clients, done, options.blockRuns));
        done += options.blockRuns;
        const after = await sample(`after block ${block}`, done);
        blocks.push({ runs: options.blockRuns, failures: ran.failures, runMs: ran.runMs, idleBeforeMb: before.mb, idleAfterMb: after.mb, growthMbPer1000Runs: round1(((after.mb - before.mb) / options.blockRuns) * 1000) });
        before = after;
      }
      return {
        version: 2,
        available,
        lanes: options.lanes,
        sandboxIdleMs: options.sandboxIdleMs,
        warmup: { runs: options.warmupRuns, ...warmup },
        idle,
        blocks,
        runs: done,
        idleAfterStartMb: idle[0].mb,
        idleAfterRunsMb: idle[idle.length - 1].mb,
        growthMbPer1000Runs: Math.max(...blocks.map((b) => b.growthMbPer1000Runs)),
        slopeMbPer1000Runs: round1(slopePer1000(idle.slice(1))),
        failures: warmup.failures + blocks.reduce((sum, b) => sum + b.failures, 0),
        runMs: warmup.runMs + blocks.reduce((sum, b) => sum + b.runMs, 0),
      };
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
  } finally {
    diagnostics.close();
    await stopApp(app);
  }
}

async function timed(work: () => Promise<number>): Promise<{ failures: number; runMs: number }> {
  const began = performance.now();
  const failures = await work();
  return { failures, runMs: Math.round(performance.now() - began) };
}

/** Signals until a report says no sandbox is alive (or the bound passes); the last report. */
async function untilNoSandbox(diagnostics: DiagnosticsChannel, timeoutMs: number): Promise<MemoryDiagnostics> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const report = await diagnostics.request();
    if (report.sandboxes === 0 || performance.now() > deadline) return report;
    await sleep(1000);
  }
}

interface DiagnosticsChannel {
  /** SIGUSR2 to the child; its next diagnostics line. */
  request(): Promise<MemoryDiagnostics>;
  close(): void;
}

/** Reads the child's stdout for `memory diagnostics:` lines (and keeps the pipe drained). */
function diagnosticsOf(child: ChildProcess): DiagnosticsChannel {
  const waiting: ((report: MemoryDiagnostics) => void)[] = [];
  let buffered = "";
  const onData = (chunk: Buffer) => {
    buffered += chunk.toString();
    const lines = buffered.split("\n");
    buffered = lines.pop() ?? "";
    for (const line of lines) {
      if (line.startsWith(MEMORY_DIAGNOSTICS_PREFIX)) waiting.shift()?.(JSON.parse(line.slice(MEMORY_DIAGNOSTICS_PREFIX.length)) as MemoryDiagnostics);
    }
  };
  child.stdout!.on("data", onData);
  return {
    request: () =>
      new Promise<MemoryDiagnostics>((resolve, reject) => {
        // Generous: a loaded machine may take a while to schedule the handler; a missing answer is a broken setup.
        const timer = setTimeout(() => reject(new Error("bench: npm start did not answer SIGUSR2 with memory diagnostics within 60 s")), 60_000);
        waiting.push((report) => (clearTimeout(timer), resolve(report)));
        child.kill("SIGUSR2");
      }),
    close: () => child.stdout!.off("data", onData),
  };
}

async function connect(app: Started): Promise<TestWsClient> {
  const client = await TestWsClient.open(app.webSocketUrl);
  const hello = await client.request("connect", { auth: { token: app.token } });
  if (!hello.ok) throw new Error(`bench: connect refused: ${JSON.stringify(hello.error)}`);
  return client;
}

/** Runs `count` runs numbered from `from`, one client per lane; returns how many did not end cleanly. */
async function driveLanes(clients: readonly TestWsClient[], from: number, count: number): Promise<number> {
  const perLane = Math.ceil(count / clients.length);
  const failures = await Promise.all(
    clients.map((client, lane) => {
      const start = from + lane * perLane;
      return drive(client, start, Math.max(0, Math.min(perLane, from + count - start)));
    }),
  );
  return failures.reduce((sum, n) => sum + n, 0);
}

async function drive(client: TestWsClient, from: number, count: number): Promise<number> {
  let failures = 0;
  for (let i = from; i < from + count; i += 1) {
    const tag = `mem-${String(i).padStart(5, "0")}`;
    const run = await driveRun(client, { sessionKey: `bench-${tag}`, shape: "one-call", runTag: tag });
    if (run.phase !== "end") failures += 1;
    // Each lane has its own client, so dropping its frames between runs loses nothing it waits for.
    client.frames.length = 0;
  }
  return failures;
}

/** RSS of the process and all its descendants, in MB (NaN where /proc is missing). */
export function rssMb(pid: number): number {
  if (!existsSync(`/proc/${pid}/status`)) return Number.NaN;
  let kb = 0;
  for (const id of [pid, ...descendants(pid)]) {
    const status = safeRead(`/proc/${id}/status`);
    kb += Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  }
  return Math.round(kb / 102.4) / 10;
}

function descendants(pid: number): number[] {
  const tasks = safeRead(`/proc/${pid}/task/${pid}/children`).trim();
  const children = tasks ? tasks.split(/\s+/).map(Number) : [];
  return children.flatMap((child) => [child, ...descendants(child)]);
}

function safeRead(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return "";
  }
}

/** Least-squares slope of RSS over runs done, in MB per 1,000 runs. */
export function slopePer1000(samples: readonly { runs: number; mb: number }[]): number {
  const meanX = samples.reduce((sum, s) => sum + s.runs, 0) / samples.length;
  const meanY = samples.reduce((sum, s) => sum + s.mb, 0) / samples.length;
  const covariance = samples.reduce((sum, s) => sum + (s.runs - meanX) * (s.mb - meanY), 0);
  const variance = samples.reduce((sum, s) => sum + (s.runs - meanX) ** 2, 0);
  return variance === 0 ? Number.NaN : (covariance / variance) * 1000;
}

const round1 = (value: number) => Math.round(value * 10) / 10;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
