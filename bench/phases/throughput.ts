/**
 * Figure 2: throughput and fairness with N concurrent sessions. Each session
 * is one WebSocket client sending one-call runs back to back (the next
 * message after the previous answer ended), so sessions compete only for the
 * stack, never for their own lane. Afterwards every run is checked four ways
 * for loss or duplication: its lifecycle end frame, its Step Functions
 * executions, its model requests and its user turn in the transcript.
 */
import { availableParallelism } from "node:os";
import { performance } from "node:perf_hooks";
import { readProcess } from "../../infra/local/lambda/cpu-gauge";
import type { LocalStack } from "../../infra/local/stack";
import { getRun } from "../../shared/aws/runs";
import { getSession } from "../../shared/aws/sessions";
import { readTranscript } from "../../shared/aws/transcript";
import type { TestWsClient } from "../../test/support/ws-client";
import { closeAll, driveRun, endFramesByRun, openClient, RUN_TIMEOUT_MS, type DrivenRun } from "../harness";
import type { BenchModelServer } from "../model-server";
import type { UsageRecorder } from "../recorder";
import { jainIndex, summarize, type Summary } from "../stats";

/** A run that ends after LATE_MS counts as late; one that has not ended after GIVE_UP_MS as lost. */
const LATE_MS = RUN_TIMEOUT_MS;
const GIVE_UP_MS = 5 * 60_000;

export interface LevelResult {
  sessions: number;
  runsPerSession: number;
  runs: number;
  wallMs: number;
  runsPerSecond: number;
  latency: Summary;
  /** Jain's index over per-session throughput (runs / time the session spent). */
  fairness: number;
  /** Slowest session's total time over the fastest one's. */
  sessionSpread: number;
  /** Never completed, even after the stack went idle. */
  lost: number;
  /** Completed, but only after more than 60 s: e.g. after an SQS redelivery. */
  late: number;
  duplicated: number;
  errors: number;
  /** Invocations past their function timeout during the level, by function. */
  overTimeout: Record<string, number>;
  /** Every run that was lost, late or duplicated, with what was found for it. */
  problems: RunCheck[];
  /** What the level's wall window cost in CPU (optional: results written before 2026-12-07 lack it). */
  cpu?: LevelCpu;
  latenciesMs: number[];
}

/**
 * CPU over a level's wall window. The bench process holds the whole local
 * stack (every emulator on the main thread, every sandbox a worker thread of
 * it) and the load generator, so `process.cpuUsage()` counts all of it.
 */
export interface LevelCpu {
  /** User + system CPU time of the process per completed run. */
  msPerRun: number;
  /** The main thread's event-loop busy time per completed run (the emulators, the edge and the load generator). */
  mainThreadMsPerRun: number;
  /** Cores in use on average over the window (CPU time / wall time). */
  coresBusy: number;
  cores: number;
  /** Runs/s the machine could serve at most at this CPU per run, every core busy. */
  cpuBoundRunsPerSecond: number;
}

export interface CpuMark {
  cpuMs: number;
  loopActiveMs: number;
}

export function cpuMark(): CpuMark {
  const { cpuMs, loop } = readProcess();
  return { cpuMs, loopActiveMs: loop.active };
}

export function levelCpu(before: CpuMark, after: CpuMark, wallMs: number, runs: number, cores = availableParallelism()): LevelCpu | undefined {
  if (runs <= 0 || wallMs <= 0) return undefined;
  const cpuMs = after.cpuMs - before.cpuMs;
  const msPerRun = cpuMs / runs;
  return {
    msPerRun,
    mainThreadMsPerRun: (after.loopActiveMs - before.loopActiveMs) / runs,
    coresBusy: cpuMs / wallMs,
    cores,
    cpuBoundRunsPerSecond: msPerRun > 0 ? (cores * 1000) / msPerRun : 0,
  };
}

export async function measureThroughput(
  stack: LocalStack,
  model: BenchModelServer,
  recorder: UsageRecorder,
  levels: readonly { sessions: number; runsPerSession: number }[],
): Promise<LevelResult[]> {
  const results: LevelResult[] = [];
  for (const level of levels) results.push(await measureLevel(stack, model, recorder, level.sessions, level.runsPerSession));
  return results;
}

async function measureLevel(stack: LocalStack, model: BenchModelServer, recorder: UsageRecorder, sessions: number, runsPerSession: number): Promise<LevelResult> {
  const clients: TestWsClient[] = [];
  for (let s = 0; s < sessions; s += 1) clients.push(await openClient(stack));
  const mark = recorder.mark();
  const sessionKey = (s: number) => `thr-${sessions}-s${String(s).padStart(3, "0")}`;
  const perSession: { runs: DrivenRun[]; ms: number }[] = [];
  const started = performance.now();
  const cpuBefore = cpuMark();
  await Promise.all(
    clients.map(async (client, s) => {
      const begin = performance.now();
      const runs: DrivenRun[] = [];
      for (let r = 0; r < runsPerSession; r += 1) {
        // A user waits for the answer before the next message: never send while the last run may
        // still be queued (it would be collected into one run, which is not what this figure counts).
        const spec = { sessionKey: sessionKey(s), shape: "one-call" as const, runTag: `${sessionKey(s)}-r${r}` };
        runs.push(await driveRun(client, spec, GIVE_UP_MS));
      }
      perSession[s] = { runs, ms: performance.now() - begin };
    }),
  );
  const wallMs = performance.now() - started;
  const cpuAfter = cpuMark();
  await stack.idle();
  const overTimeout = recorder.since(mark).overTimeout as Record<string, number>;
  const runs = perSession.flatMap((session) => session.runs);
  const integrity = await checkIntegrity(stack, model, recorder, clients, runs, sessions, sessionKey);
  await closeAll(clients);
  const latenciesMs = runs.filter((run) => run.phase === "end").map((run) => Math.round(run.ms * 1000) / 1000);
  const sessionMs = perSession.map((session) => session.ms);
  const cpu = levelCpu(cpuBefore, cpuAfter, wallMs, latenciesMs.length);
  return {
    sessions,
    runsPerSession,
    runs: runs.length,
    wallMs: Math.round(wallMs),
    runsPerSecond: (latenciesMs.length / wallMs) * 1000,
    latency: summarize(latenciesMs),
    fairness: jainIndex(sessionMs.map((ms) => runsPerSession / ms)),
    sessionSpread: Math.max(...sessionMs) / Math.min(...sessionMs),
    ...integrity,
    errors: runs.filter((run) => run.phase === "error").length,
    overTimeout,
    ...(cpu ? { cpu } : {}),
    latenciesMs,
  };
}

export interface RunCheck {
  runTag: string;
  runId: string;
  phase: DrivenRun["phase"];
  endFrames: number;
  executions: number;
  modelRequests: number;
  userTurns: number;
  verdict: "lost" | "late" | "duplicated";
  /** The run record's status after the stack went idle (a "lost" run that ended with an error is not the same as one that vanished). */
  status?: string;
}

async function checkIntegrity(
  stack: LocalStack,
  model: BenchModelServer,
  recorder: UsageRecorder,
  clients: TestWsClient[],
  runs: DrivenRun[],
  sessions: number,
  sessionKey: (s: number) => string,
): Promise<{ lost: number; late: number; duplicated: number; problems: RunCheck[] }> {
  const endFrames = endFramesByRun(clients);
  const userTurns = await userTurnsByTag(stack, sessions, sessionKey);
  const problems: RunCheck[] = [];
  for (const run of runs) {
    const found = {
      endFrames: endFrames.get(run.runId) ?? 0,
      executions: recorder.executionsByName.get(run.runId) ?? 0,
      modelRequests: model.statsOf(run.runTag).requests,
      userTurns: userTurns.get(run.runTag) ?? 0,
    };
    const verdict = verdictOf(run, found);
    if (verdict) problems.push({ runTag: run.runTag, runId: run.runId, phase: run.phase, ...found, verdict, status: (await getRun(stack.deps.db, run.runId))?.status ?? "no record" });
  }
  const count = (verdict: RunCheck["verdict"]) => problems.filter((p) => p.verdict === verdict).length;
  return { lost: count("lost"), late: count("late"), duplicated: count("duplicated"), problems };
}

function verdictOf(run: DrivenRun, found: Omit<RunCheck, "runTag" | "runId" | "phase" | "verdict" | "status">): RunCheck["verdict"] | undefined {
  if (Object.values(found).some((n) => n === 0)) return "lost";
  if (run.cached || Object.values(found).some((n) => n > 1)) return "duplicated";
  if (run.phase === "timeout" || run.ms > LATE_MS) return "late";
  return undefined;
}

/** How many user turns in each session's transcript carry each run tag. */
async function userTurnsByTag(stack: LocalStack, sessions: number, sessionKey: (s: number) => string): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (let s = 0; s < sessions; s += 1) {
    const session = await getSession(stack.deps.db, sessionKey(s));
    if (!session) continue;
    for (const entry of await readTranscript(stack.deps.db, session.sessionId)) {
      if (entry.message.role !== "user") continue;
      const tag = /\[bench one-call (\S+)\]/.exec(JSON.stringify(entry.message.content))?.[1];
      if (tag) counts.set(tag, (counts.get(tag) ?? 0) + 1);
    }
  }
  return counts;
}
