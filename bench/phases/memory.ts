/**
 * The local stack's memory: resident set size of `npm start` (the process and
 * every child it spawned; worker threads are part of the process), idle after
 * start, once each function of a run has a warm sandbox, and along N runs with
 * the built-in offline model (fresh session each, `lanes` sessions at a time),
 * then idle again after the sandboxes had time to be reaped. Read from
 * /proc (Linux); elsewhere the figure is reported as unavailable.
 */
import { existsSync, readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { TestWsClient } from "../../test/support/ws-client";
import { driveRun } from "../harness";
import { startApp, stopApp, type Started } from "./foundation";

export interface MemoryOptions {
  runs: number;
  /** Sessions driven at once. */
  lanes: number;
  /** How long the stack sits idle before the idle samples (ms). */
  idleMs: number;
  /** An RSS sample every this many runs. */
  sampleEvery: number;
}

export interface MemoryResult {
  available: boolean;
  runs: number;
  idleMs: number;
  /** After start, idle for idleMs. */
  idleAfterStartMb: number;
  /** Right after the first run (every function of a run has a sandbox). */
  afterFirstRunMb: number;
  /** Right after the last run. */
  afterRunsMb: number;
  /** After the last run and idleMs of quiet. */
  idleAfterRunsMb: number;
  /** Growth per 1000 runs: least-squares slope of the samples after the first tenth of the runs. */
  growthMbPer1000Runs: number;
  samples: { run: number; mb: number }[];
  failures: number;
  runMs: number;
}

export async function measureMemory(options: MemoryOptions): Promise<MemoryResult> {
  const app = await startApp();
  const pid = app.child.pid!;
  try {
    await sleep(options.idleMs);
    const idleAfterStartMb = rssMb(pid);
    const clients: TestWsClient[] = [];
    for (let lane = 0; lane < options.lanes; lane += 1) clients.push(await connect(app));
    const client = clients[0];
    try {
      const samples: { run: number; mb: number }[] = [];
      let failures = 0;
      failures += await drive(client, 0, 1);
      const afterFirstRunMb = rssMb(pid);
      samples.push({ run: 1, mb: afterFirstRunMb });
      const began = performance.now();
      for (let done = 1; done < options.runs; ) {
        const batch = Math.min(options.sampleEvery, options.runs - done);
        failures += await driveLanes(clients, done, batch);
        done += batch;
        samples.push({ run: done, mb: rssMb(pid) });
      }
      const runMs = performance.now() - began;
      const afterRunsMb = rssMb(pid);
      await sleep(options.idleMs);
      return {
        available: existsSync(`/proc/${pid}/status`),
        runs: options.runs,
        idleMs: options.idleMs,
        idleAfterStartMb,
        afterFirstRunMb,
        afterRunsMb,
        idleAfterRunsMb: rssMb(pid),
        growthMbPer1000Runs: slope(samples.filter((s) => s.run > options.runs / 10)) * 1000,
        samples,
        failures,
        runMs,
      };
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
  } finally {
    await stopApp(app);
  }
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

/** Least-squares slope of mb over run (MB per run). */
export function slope(samples: readonly { run: number; mb: number }[]): number {
  if (samples.length < 2) return 0;
  const n = samples.length;
  const meanX = samples.reduce((s, p) => s + p.run, 0) / n;
  const meanY = samples.reduce((s, p) => s + p.mb, 0) / n;
  const num = samples.reduce((s, p) => s + (p.run - meanX) * (p.mb - meanY), 0);
  const den = samples.reduce((s, p) => s + (p.run - meanX) ** 2, 0);
  return den === 0 ? 0 : num / den;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
