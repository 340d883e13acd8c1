/**
 * Figures for the foundation issue: how long `npm start` takes until it
 * prints where it listens (spawned as test/support/npm-start.ts spawns it:
 * `node --import tsx infra/local/main.ts`, fresh data folder each time; the
 * first start synthesizes the CDK app, every later one finds the cloud
 * assembly in the data folder's assembly cache, as a restart does), and
 * the time from `POST /v1/agent` to the lifecycle end event with the
 * built-in offline model, seen by a WebSocket client subscribed to the session.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { TestWsClient } from "../../test/support/ws-client";
import { isLifecycleEnd } from "../harness";
import { summarize, type Summary } from "../stats";

/** Generous: on a loaded machine tsx alone can take tens of seconds to load the graph. */
const READY_TIMEOUT_MS = 180_000;

export interface Started {
  child: ChildProcess;
  dataDir: string;
  restUrl: string;
  webSocketUrl: string;
  token: string;
  /** Spawn -> banner fully printed. */
  readyMs: number;
  /** What the process itself reports ("ready in N ms", after Node and tsx loaded). */
  reportedMs: number;
}

export interface FoundationResult {
  /** Starts that found the assembly in the cache (every start after the first). */
  startupMs: Summary;
  reportedStartupMs: Summary;
  /** The first start: fresh data folder, nothing cached, the CDK app synthesized. */
  coldStartupMs?: { readyMs: number; reportedMs: number };
  offlineRunMs: Summary;
  samples: { startupMs: number[]; reportedStartupMs: number[]; offlineRunMs: number[] };
}

export async function measureFoundation(options: { starts: number; runs: number; warmup: number }): Promise<FoundationResult> {
  const startups: Started[] = [];
  try {
    // The first start synthesizes; its assembly cache seeds every later start's fresh data folder.
    const seed = mkdtempSync(join(tmpdir(), "agent-runner-bench-cache-"));
    try {
      for (let i = 0; i <= options.starts; i += 1) {
        const app = await startApp(i === 0 ? undefined : { assemblyCacheFrom: seed });
        startups.push(app);
        if (i === 0) cpSync(join(app.dataDir, "assembly-cache"), join(seed, "assembly-cache"), { recursive: true });
        if (i < options.starts) await stopApp(app);
      }
    } finally {
      rmSync(seed, { recursive: true, force: true });
    }
    const last = startups[startups.length - 1];
    const runs = await offlineRuns(last, options.runs, options.warmup);
    const [cold, ...cached] = startups;
    return {
      startupMs: summarize(cached.map((s) => s.readyMs)),
      reportedStartupMs: summarize(cached.map((s) => s.reportedMs)),
      coldStartupMs: { readyMs: cold.readyMs, reportedMs: cold.reportedMs },
      offlineRunMs: summarize(runs),
      samples: { startupMs: cached.map((s) => s.readyMs), reportedStartupMs: cached.map((s) => s.reportedMs), offlineRunMs: runs },
    };
  } finally {
    const last = startups[startups.length - 1];
    if (last && last.child.exitCode === null) await stopApp(last);
  }
}

async function offlineRuns(app: Started, runs: number, warmup: number): Promise<number[]> {
  const client = await TestWsClient.open(app.webSocketUrl);
  const out: number[] = [];
  try {
    await client.request("connect", { auth: { token: app.token } });
    for (let i = 0; i < warmup + runs; i += 1) {
      const sessionKey = `foundation-${i}`;
      await client.request("sessions.subscribe", { sessionKey });
      const started = performance.now();
      const res = await fetch(`${app.restUrl}/v1/agent`, {
        method: "POST",
        headers: { authorization: `Bearer ${app.token}`, "content-type": "application/json" },
        body: JSON.stringify({ sessionKey, message: `hello number ${i}`, idempotencyKey: `foundation-${i}` }),
      });
      const { runId } = (await res.json()) as { runId: string };
      await client.waitFor(isLifecycleEnd(runId), 60_000);
      if (i >= warmup) out.push(Math.round((performance.now() - started) * 1000) / 1000);
    }
  } finally {
    await client.close();
  }
  return out;
}

/**
 * Spawns `npm start`'s entry point on a fresh data folder and waits for its
 * banner. `assemblyCacheFrom`: a folder whose `assembly-cache` is copied in
 * first (the start then deploys the cached assembly instead of synthesizing).
 * `env`: added to the child's environment (the memory phase's settings).
 */
/** glibc malloc settings of `npm start` (package.json's `start` script; README "Memory of the local stack"). */
export const NPM_START_MALLOC = { MALLOC_ARENA_MAX: "2", MALLOC_MMAP_THRESHOLD_: "131072", MALLOC_TRIM_THRESHOLD_: "131072" } as const;

export function startApp(options: { assemblyCacheFrom?: string; env?: Record<string, string> } = {}): Promise<Started> {
  const dataDir = mkdtempSync(join(tmpdir(), "agent-runner-bench-"));
  const cache = options.assemblyCacheFrom ? join(options.assemblyCacheFrom, "assembly-cache") : undefined;
  if (cache && existsSync(cache)) cpSync(cache, join(dataDir, "assembly-cache"), { recursive: true });
  const started = performance.now();
  const child = spawn(process.execPath, ["--import", "tsx", "infra/local/main.ts"], {
    cwd: process.cwd(),
    // The malloc settings `npm start` sets (package.json): measured is what a user runs.
    env: { ...process.env, PORT: "0", DATA_DIR: dataDir, LOG_LEVEL: "warn", AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true", MODEL: "offline/echo", ...NPM_START_MALLOC, ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => (child.kill("SIGKILL"), reject(new Error(`npm start did not get ready:\n${output}`))), READY_TIMEOUT_MS);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const rest = /REST base URL : (\S+)/.exec(output);
      const ws = /WebSocket URL : (\S+)/.exec(output);
      const token = /auth token {4}: (\S+)/.exec(output);
      const model = /model {9}: (.+)/.exec(output);
      const reported = /ready in (\d+) ms/.exec(output);
      if (!rest || !ws || !token || !model || !reported) return;
      clearTimeout(timer);
      child.stdout!.off("data", onData);
      resolve({ child, dataDir, restUrl: rest[1], webSocketUrl: ws[1], token: token[1], readyMs: Math.round(performance.now() - started), reportedMs: Number(reported[1]) });
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.once("exit", (code) => (clearTimeout(timer), reject(new Error(`npm start exited (${code}):\n${output}`))));
  });
}

export function stopApp(app: Started): Promise<void> {
  return new Promise((resolve) => {
    const done = () => (rmSync(app.dataDir, { recursive: true, force: true }), resolve());
    if (app.child.exitCode !== null) return done();
    const timer = setTimeout(() => app.child.kill("SIGKILL"), 10_000);
    app.child.once("exit", () => (clearTimeout(timer), done()));
    app.child.kill("SIGTERM");
  });
}
