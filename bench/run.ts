/**
 * `npm run bench`: measures what users of the runner pay besides the model
 * and writes BENCHMARKS.md plus the raw numbers (bench/results/latest.json).
 *
 *   npm run bench                      full run (~5 min on 2 cores), rewrites BENCHMARKS.md
 *   npm run bench -- --quick           small counts, results in the OS temp folder only
 *   npm run bench -- --only=cost,streaming   some figures (with --quick or --out=FILE)
 *     figures: cold-start, foundation, memory, overhead, openai-client, throughput, cost, streaming
 *   npm run bench -- --only=throughput --levels=100x3 --out=FILE   chosen throughput levels (sessions x runs each)
 *   npm run bench -- --note="..."      a caveat printed at the top of the report
 *   npm run bench -- --render          re-render BENCHMARKS.md from the last full results
 *
 * Nothing is random: run tags, session keys and message texts come from
 * counters, so two runs of the harness drive the same conversations.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg, release, tmpdir, totalmem } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startBenchStack } from "./harness";
import { awsLikeLatency } from "./latency-model";
import { BenchModelServer } from "./model-server";
import { measureColdStart } from "./phases/cold-start";
import { measureCost } from "./phases/cost";
import { measureFoundation } from "./phases/foundation";
import { measureMemory } from "./phases/memory";
import { measureOpenAiClient } from "./phases/openai-client";
import { measureOverhead } from "./phases/overhead";
import { measureStreaming } from "./phases/streaming";
import { measureThroughput } from "./phases/throughput";
import { UsageRecorder } from "./recorder";
import { renderReport, type BenchResults } from "./report";

const FIGURES = ["cold-start", "foundation", "memory", "overhead", "openai-client", "throughput", "aws-latency", "cost", "streaming"] as const;
type Figure = (typeof FIGURES)[number];

/**
 * The memory phase's idle samples: the `npm start` child reaps idle sandboxes
 * after 2 s (LOCAL_SANDBOX_IDLE_MS), the phase waits 5 s of quiet and then until
 * no sandbox is alive (at most 3 min), with a GC of the main thread first.
 */
const MEMORY_IDLE = { sandboxIdleMs: 2_000, settleMs: 5_000, idleTimeoutMs: 180_000 };

const PROFILES = {
  full: {
    overhead: { runs: 60, warmup: 10 },
    throughput: [
      { sessions: 1, runsPerSession: 40 },
      { sessions: 10, runsPerSession: 10 },
      { sessions: 100, runsPerSession: 3 },
    ],
    cost: { runs: 10, warmup: 2, concurrentRetries: 5 },
    streaming: [
      { tokens: 1000, delayMs: 0 },
      { tokens: 1000, delayMs: 10 },
      { tokens: 250, delayMs: 40 },
    ],
    coldStart: { repeats: 5 },
    foundation: { starts: 5, runs: 20, warmup: 3 },
    // The warm-up is the goal's "measure after 1,000 runs": bounded stores fill during it (the local
    // Step Functions keeps the last 1,000 closed executions), so the blocks after it show growth per run.
    memory: { warmupRuns: 1000, blockRuns: 1000, blocks: 4, lanes: 4, ...MEMORY_IDLE },
    openAiClient: { runs: 20, warmup: 3 },
    awsLatency: { runs: 20, warmup: 5 },
  },
  quick: {
    overhead: { runs: 5, warmup: 2 },
    throughput: [
      { sessions: 1, runsPerSession: 5 },
      { sessions: 10, runsPerSession: 2 },
      { sessions: 20, runsPerSession: 1 },
    ],
    cost: { runs: 2, warmup: 1, concurrentRetries: 2 },
    streaming: [
      { tokens: 200, delayMs: 0 },
      { tokens: 100, delayMs: 10 },
    ],
    coldStart: { repeats: 1 },
    foundation: { starts: 1, runs: 3, warmup: 1 },
    memory: { warmupRuns: 10, blockRuns: 20, blocks: 2, lanes: 2, ...MEMORY_IDLE },
    openAiClient: { runs: 3, warmup: 1 },
    awsLatency: { runs: 3, warmup: 1 },
  },
};

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

function parseArgs(argv: string[]) {
  const flag = (name: string) => argv.find((arg) => arg === `--${name}` || arg.startsWith(`--${name}=`));
  const value = (name: string) => flag(name)?.split("=").slice(1).join("=");
  const only = value("only")?.split(",").filter(Boolean) as Figure[] | undefined;
  for (const figure of only ?? []) if (!FIGURES.includes(figure)) throw new Error(`unknown figure ${figure} (one of ${FIGURES.join(", ")})`);
  const levels = value("levels")?.split(",").map(parseLevel);
  return { quick: Boolean(flag("quick")), only, note: value("note"), out: value("out"), render: Boolean(flag("render")), levels };
}

/** `100x3`: 100 sessions, 3 runs each. */
function parseLevel(text: string): { sessions: number; runsPerSession: number } {
  const match = /^(\d+)x(\d+)$/.exec(text);
  if (!match) throw new Error(`--levels: ${text} is not SESSIONSxRUNS (e.g. 100x3)`);
  return { sessions: Number(match[1]), runsPerSession: Number(match[2]) };
}

/** The command as typed, with the note (printed on its own) shortened. */
function commandLine(args: string[]): string {
  const shown = args.map((arg) => (arg.startsWith("--note=") ? '--note="…"' : arg));
  return `npm run bench${shown.length ? ` -- ${shown.join(" ")}` : ""}`;
}

function machine() {
  const gitCommit = (() => {
    try {
      return execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: ROOT, encoding: "utf8" }).trim();
    } catch {
      return "unknown";
    }
  })();
  return {
    cpu: cpus()[0]?.model ?? "unknown",
    cores: cpus().length,
    memoryGb: Math.round(totalmem() / 2 ** 30),
    os: `${process.platform} ${release()}`,
    node: process.version,
    gitCommit,
  };
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  if (args.render) return renderOnly();
  const chosen = args.quick ? PROFILES.quick : PROFILES.full;
  const profile = args.levels ? { ...chosen, throughput: args.levels } : chosen;
  const wants = (figure: Figure) => !args.only || args.only.includes(figure);
  const startedAt = new Date();
  const results: BenchResults = {
    meta: {
      date: startedAt.toISOString(),
      command: commandLine(process.argv.slice(2)),
      profile: args.quick ? "quick" : "full",
      machine: machine(),
      loadAverageAtStart: loadavg().map((n) => Math.round(n * 100) / 100),
      note: args.note,
      durationSeconds: 0,
    },
  };
  const step = async <T>(figure: Figure, work: () => Promise<T>): Promise<T | undefined> => {
    if (!wants(figure)) return undefined;
    const began = Date.now();
    process.stdout.write(`bench: ${figure} ...`);
    const out = await work();
    process.stdout.write(` ${((Date.now() - began) / 1000).toFixed(1)} s\n`);
    return out;
  };

  results.coldStart = await step("cold-start", () => measureColdStart(profile.coldStart));
  results.foundation = await step("foundation", () => measureFoundation(profile.foundation));
  results.memory = await step("memory", () => measureMemory(profile.memory));

  const model = await BenchModelServer.start();
  try {
    if (wants("overhead") || wants("openai-client") || wants("throughput")) {
      // Timing stack: no SDK metering (it adds work to every call), executions still observed.
      const recorder = new UsageRecorder({ meter: false });
      const stack = await startBenchStack(model, recorder.observer());
      try {
        results.overhead = await step("overhead", () => measureOverhead(stack, model, profile.overhead));
        await settle(stack);
        results.openAiClient = await step("openai-client", () => measureOpenAiClient(stack, model, profile.openAiClient));
        await settle(stack);
        results.throughput = await step("throughput", () => measureThroughput(stack, model, recorder, profile.throughput));
      } finally {
        await stack.close();
      }
    }
    if (wants("aws-latency")) {
      // Figure 1 again, each function's AWS call answered after the latency a region would add (awsLikeLatency).
      const stack = await startBenchStack(model, undefined, undefined, { callLatencyMs: awsLikeLatency });
      try {
        results.awsLatency = await step("aws-latency", () => measureOverhead(stack, model, profile.awsLatency));
      } finally {
        await stack.close();
      }
    }
    if (wants("cost") || wants("streaming")) {
      const recorder = new UsageRecorder({ meter: true });
      const stack = await startBenchStack(model, recorder.observer(), recorder.logSink);
      try {
        results.cost = await step("cost", () => measureCost(stack, recorder, profile.cost));
        await settle(stack);
        results.streaming = await step("streaming", () => measureStreaming(stack, model, recorder, profile.streaming));
      } finally {
        await stack.close();
      }
    }
  } finally {
    await model.close();
  }

  results.meta.durationSeconds = Math.round((Date.now() - startedAt.getTime()) / 1000);
  results.meta.loadAverageAtEnd = loadavg().map((n) => Math.round(n * 100) / 100);
  writeOutputs(results, args);
}

/** `--render`: rewrites BENCHMARKS.md from bench/results/latest.json without measuring again. */
function renderOnly(): void {
  const results = JSON.parse(readFileSync(join(ROOT, "bench/results/latest.json"), "utf8")) as BenchResults;
  writeFileSync(join(ROOT, "BENCHMARKS.md"), renderReport(results, "bench/results/latest.json"));
  process.stdout.write("bench: BENCHMARKS.md re-rendered from bench/results/latest.json\n");
}

/** Lets the `$disconnect` invocations of a finished figure drain before the next one starts. */
async function settle(stack: { idle(): Promise<void> }): Promise<void> {
  await stack.idle();
  await new Promise((resolve) => setTimeout(resolve, 500));
}

function writeOutputs(results: BenchResults, args: ReturnType<typeof parseArgs>): void {
  const official = !args.quick && !args.only && !args.out && !args.levels;
  const jsonPath = args.out ?? (official ? join(ROOT, "bench/results/latest.json") : join(tmpdir(), `agent-runner-bench-${results.meta.profile}.json`));
  mkdirSync(dirname(jsonPath), { recursive: true });
  writeFileSync(jsonPath, `${JSON.stringify(results, null, 1)}\n`);
  const report = renderReport(results, official ? "bench/results/latest.json" : jsonPath);
  const reportPath = official ? join(ROOT, "BENCHMARKS.md") : jsonPath.replace(/\.json$/, ".md");
  writeFileSync(reportPath, report);
  process.stdout.write(`bench: raw numbers -> ${jsonPath}\nbench: report -> ${reportPath} (${results.meta.durationSeconds} s)\n`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
