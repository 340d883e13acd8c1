/**
 * The report's first section: every goal of the performance issue next to
 * what this run measured, ratios first, and whether it is met. Also the
 * sections for the figures added with it: memory, the AWS latency model,
 * CloudWatch Logs / X-Ray, and OpenClaw's client path. Every number comes
 * from the results; each says whether it is measured or modelled.
 */
import { CALL_LATENCIES, type LatencyCategory } from "./latency-model";
import { ACCESS_LOG_BYTES_PER_REQUEST, PLATFORM_LOG_BYTES_PER_INVOCATION, XRAY_DEFAULT_SAMPLING_AT_SCALE } from "./observability-cost";
import type { MemoryResult } from "./phases/memory";
import type { OpenAiClientResult } from "./phases/openai-client";
import type { BenchResults } from "./report";
import { TOOL_ROUNDS } from "./shapes";

const n = (value: number | undefined, digits = 1) => (value !== undefined && Number.isFinite(value) ? value.toFixed(digits) : "n/a");
const usd = (value: number | undefined) => (value === undefined || !Number.isFinite(value) ? "n/a" : `$${value < 0.01 ? value.toFixed(5) : value.toFixed(4)}`);
const row = (cells: (string | number)[]) => `| ${cells.join(" | ")} |`;
const table = (head: string[], rows: (string | number)[][]) => [row(head), row(head.map(() => "---")), ...rows.map(row)].join("\n");

interface Goal {
  goal: string;
  measured: string;
  target: string;
  met: boolean | undefined;
  kind: "measured" | "modelled" | "measured + modelled";
}

const verdict = (met: boolean | undefined, target: string) => (target === REPORTED ? "-" : met === undefined ? "not measured" : met ? "**met**" : "not met");
/** A figure the issue asks to report, without a target. */
const REPORTED = "(reported)";
const atMost = (value: number | undefined, limit: number) => (value === undefined || !Number.isFinite(value) ? undefined : value <= limit);

/** The goals of the performance issue, in its order; figures this run did not measure say so. */
export function goalsSection(results: BenchResults): string {
  const goals = [...runtimeGoals(results), ...costGoals(results), ...loadGoals(results), ...localStackGoals(results)];
  return [
    "## Goals at a glance",
    "",
    "Each goal of the performance issue next to this run's figure (details in the sections below). Ratios first.",
    "",
    table(
      ["goal", "this run", "target", "verdict", "measured or modelled"],
      goals.map((g) => [g.goal, g.measured, g.target, verdict(g.met, g.target), g.kind]),
    ),
  ].join("\n");
}

function runtimeGoals(results: BenchResults): Goal[] {
  const one = results.overhead?.shapes["one-call"].summary;
  const tools = results.overhead?.shapes["tools-3"].summary;
  const perRound = one && tools ? (tools.medianExtraMs - one.medianExtraMs) / TOOL_ROUNDS : undefined;
  return [
    { goal: "runtime overhead of a clean one-call run vs the direct-SDK floor (median)", measured: one ? `${n(one.medianRatio)}x (${n(one.runtime.median)} ms vs ${n(one.baseline.median, 2)} ms)` : "n/a", target: "≤ 12x", met: atMost(one?.medianRatio, 12), kind: "measured" },
    { goal: "overhead of one tool round trip (tools-3 minus one-call, per round, median)", measured: perRound !== undefined ? `${n(perRound)} ms` : "n/a", target: "≤ 10 ms", met: atMost(perRound, 10), kind: "measured" },
  ];
}

function costGoals(results: BenchResults): Goal[] {
  const clean = results.cost?.shapes.find((s) => s.shape === "one-call");
  const usage = clean?.usagePerRun;
  const stream = streamingAtModelPace(results);
  return [
    { goal: "DynamoDB requests per clean run", measured: n(clean?.dynamoRequestsPerRun), target: "≤ 20", met: atMost(clean?.dynamoRequestsPerRun, 20), kind: "measured" },
    { goal: "DynamoDB WRU per clean run", measured: n(usage?.dynamoWriteUnits), target: "≤ 12", met: atMost(usage?.dynamoWriteUnits, 12), kind: "measured" },
    { goal: "DynamoDB RRU per clean run", measured: n(usage?.dynamoReadUnits), target: "≤ 12", met: atMost(usage?.dynamoReadUnits, 12), kind: "measured" },
    { goal: "Step Functions state transitions per clean run", measured: n(usage?.stateTransitions), target: "≤ 3", met: atMost(usage?.stateTransitions, 3), kind: "measured" },
    { goal: "$ per 1,000 clean runs without model tokens (Lambda, Step Functions, DynamoDB, SQS, WebSocket)", measured: usd(clean?.per1000Runs.total), target: "≤ $0.10", met: atMost(clean?.per1000Runs.total, 0.1), kind: "measured" },
    {
      goal: "... plus CloudWatch Logs and X-Ray (default sampling at scale) per 1,000 clean runs",
      measured: clean ? usd(clean.per1000Runs.total + 1000 * (clean.observability.logsDollars + clean.observability.xrayDollarsDefaultSampling)) : "n/a",
      target: REPORTED,
      met: undefined,
      kind: "measured + modelled",
    },
    {
      goal: `streaming a 1,000-token answer at a model's pace: WebSocket + WRU $ per 1,000 runs${stream ? ` (${n(stream.tokensPerSecond, 0)} tok/s)` : ""}`,
      measured: usd(stream ? stream.per1000Tokens.dollars * 1000 : undefined),
      target: "≤ $0.05",
      met: atMost(stream ? stream.per1000Tokens.dollars * 1000 : undefined, 0.05),
      kind: "measured",
    },
  ];
}

/** The streaming case closest to 100 tokens/s with 1000 tokens, else the slowest-paced one. */
function streamingAtModelPace(results: BenchResults) {
  const paced = (results.streaming ?? []).filter((c) => c.delayMs > 0);
  if (paced.length === 0) return undefined;
  return [...paced].sort((a, b) => Number(b.tokens === 1000) - Number(a.tokens === 1000) || Math.abs(a.tokensPerSecond - 100) - Math.abs(b.tokensPerSecond - 100))[0];
}

function loadGoals(results: BenchResults): Goal[] {
  const levels = results.throughput ?? [];
  const top = levels.length ? levels.reduce((a, b) => (b.sessions > a.sessions ? b : a)) : undefined;
  const label = top ? `${top.sessions} concurrent sessions` : "100 concurrent sessions";
  return [
    { goal: `${label}: fairness (Jain)`, measured: n(top?.fairness, 3), target: "≥ 0.9", met: top ? top.fairness >= 0.9 : undefined, kind: "measured" },
    // Every session waits for its answer before its next message, so (Little's law) the mean latency is sessions / throughput.
    {
      goal: `${label}: latency p95 (runs/s in brackets: the mean latency is sessions / runs/s; then the CPU per run and the runs/s it allows on this machine, figure 2)`,
      measured: top ? `${n(top.latency.p95 / 1000, 2)} s [${n(top.runsPerSecond, 2)} runs/s${top.cpu ? `; ${n(top.cpu.msPerRun, 0)} ms CPU per run, at most ${n(top.cpu.cpuBoundRunsPerSecond, 1)} runs/s on ${top.cpu.cores} cores` : ""}]` : "n/a",
      target: "≤ 5 s",
      met: atMost(top?.latency.p95, 5000),
      kind: "measured",
    },
    { goal: `${label}: lost / duplicated runs`, measured: top ? `${top.lost} / ${top.duplicated}` : "n/a", target: "0 / 0", met: top ? top.lost === 0 && top.duplicated === 0 : undefined, kind: "measured" },
  ];
}

/** The import's CPU time next to its wall time (the wall time grows with the machine's load, the CPU time much less). */
const cpuOf = (bundle: { importCpuMs?: { median: number } }) => (bundle.importCpuMs ? ` [${n(bundle.importCpuMs.median)} ms CPU]` : "");

function localStackGoals(results: BenchResults): Goal[] {
  const memory = results.memory?.version === 2 ? results.memory : undefined;
  const start = results.foundation?.startupMs;
  const reported = results.foundation?.reportedStartupMs;
  const bundles = (results.coldStart ?? []).flatMap((b) => ("error" in b ? [] : [b]));
  const attempt = bundles.find((b) => b.key === "attempt");
  const others = bundles.filter((b) => b.key !== "attempt");
  const slowestOther = others.length ? others.reduce((a, b) => (b.importMs.median > a.importMs.median ? b : a)) : undefined;
  const idleMax = memory ? Math.max(memory.idleAfterStartMb, memory.idleAfterRunsMb) : undefined;
  return [
    { goal: "local stack idle RSS (after start / after the runs, all processes and threads, no sandbox alive)", measured: memory ? `${n(memory.idleAfterStartMb, 0)} / ${n(memory.idleAfterRunsMb, 0)} MB` : "n/a", target: "≤ 300 MB", met: atMost(idleMax, 300), kind: "measured" },
    {
      goal: `idle RSS growth per 1,000 runs (least-squares slope of the idle samples over ${memory?.blocks.length ?? "N"} blocks of ${memory?.blocks[0]?.runs ?? "N"} runs after a warm-up of ${memory?.warmup.runs ?? "N"}; each block's own figure in brackets)`,
      measured: memory ? `${n(memory.slopeMbPer1000Runs)} MB [${memory.blocks.map((b) => `${n(b.growthMbPer1000Runs)}`).join(" / ")} MB]` : "n/a",
      target: "≤ 5 MB",
      met: atMost(memory?.slopeMbPer1000Runs, 5),
      kind: "measured",
    },
    { goal: "`npm start` ready, cloud assembly cached (spawn -> banner, median; the process's own \"ready in\" in brackets)", measured: start ? `${n(start.median / 1000, 2)} s${reported ? ` [${n(reported.median / 1000, 2)} s]` : ""}` : "n/a", target: "≤ 5 s", met: atMost(start?.median, 5000), kind: "measured" },
    { goal: "attempt bundle import (median, as deployed; CPU time in brackets)", measured: attempt ? `${n(attempt.importMs.median)} ms${cpuOf(attempt)}` : "n/a", target: "≤ 80 ms", met: atMost(attempt?.importMs.median, 80), kind: "measured" },
    { goal: "slowest other bundle import (median, as deployed; CPU time in brackets)", measured: slowestOther ? `${n(slowestOther.importMs.median)} ms${cpuOf(slowestOther)} (${slowestOther.key})` : "n/a", target: "≤ 60 ms", met: atMost(slowestOther?.importMs.median, 60), kind: "measured" },
  ];
}

export function memorySection(memory: MemoryResult): string {
  if (memory.version !== 2) return ["## Local stack memory", "", "Measured with an older version of the memory phase (samples while runs were in flight); rerun it for the idle-to-idle figures."].join("\n");
  if (!memory.available) return ["## Local stack memory", "", "Not measured: no /proc on this machine."].join("\n");
  const idleRows = memory.idle.map((s) => [s.label, s.runs, `${n(s.mb, 1)} MB`, `${n(s.main.heapUsedMb, 1)} / ${n(s.main.heapTotalMb, 1)} MB`, s.main.sandboxes, `${n(s.waitedMs / 1000, 0)} s`]);
  const blockRows = memory.blocks.map((b, i) => [`block ${i + 1}`, b.runs, `${n(b.idleBeforeMb, 1)} -> ${n(b.idleAfterMb, 1)} MB`, `${n(b.growthMbPer1000Runs)} MB`, b.failures, `${n(b.runMs / 1000, 0)} s`]);
  return [
    "## Local stack memory",
    "",
    `\`npm start\` (\`node --import tsx infra/local/main.ts\`, fresh data folder, so the start synthesizes the CDK app, in a child process that has exited by the first sample: \`infra/local/synth-process.ts\`; offline model), resident set size of the process and all its children (worker-thread sandboxes are threads of the process, so they are in it), read from /proc, only when the stack is idle: every sandbox stopped (\`LOCAL_SANDBOX_IDLE_MS=${memory.sandboxIdleMs}\`) and the main thread garbage-collected (\`LOCAL_MEMORY_DIAGNOSTICS=1\`, SIGUSR2). A warm-up of ${memory.warmup.runs} runs (${memory.warmup.failures} failed), then blocks of runs over WebSocket, ${memory.lanes} sessions at a time, a fresh session each.`,
    "",
    table(["idle sample", "runs done", "RSS", "main heap used / total", "sandboxes alive", "waited"], idleRows),
    "",
    table(["block", "runs", "idle RSS before -> after", "growth per 1,000 runs", "failed runs", "run time"], blockRows),
    "",
    `Growth per run: the least-squares slope of the idle samples from the warm-up's on, **${n(memory.slopeMbPer1000Runs)} MB per 1,000 runs** (the goal's figure). One idle sample differs from the next by several MB whatever the runs did (a block can shrink), so a single block's figure, the difference of two samples, carries both samples' noise; the slope over every sample after the warm-up averages it out. The warm-up is the goal's "measure after 1,000 runs": bounded stores fill during it (the local Step Functions keeps the last 1,000 closed executions).`,
  ].join("\n");
}

export function latencySection(results: BenchResults): string | undefined {
  const clean = results.cost?.shapes.find((s) => s.shape === "one-call");
  if (!clean?.latency) return undefined;
  const model = clean.latency;
  const local = results.overhead?.shapes["one-call"].summary.runtime.median;
  const rows = model.rows.map((r) => [CALL_LATENCIES[r.category].label, n(r.perRun), n(r.onPathPerRun), `${r.msEach} ms`, `${n(r.ms)} ms`, CALL_LATENCIES[r.category].kind]);
  const shapes = (results.cost?.shapes ?? []).filter((s) => s.latency);
  return [
    "## AWS latency model of a clean run",
    "",
    `Modelled, not measured: the calls of a clean one-call run that finished between its \`agent\` request and its lifecycle end frame on the metered stack (${model.runs} runs, mean), each at a per-call latency for one region. Calls go out side by side where they do not depend on each other, so the critical path is the longest chain of calls each of which started after the one before it finished on the local stack (\`bench/latency-model.ts\`): an upper bound of the real one at these latencies, since two calls that merely happened one after the other locally are chained too. Of the event-source poller's receives only the one that delivered the run's message counts (the others are polling, paid with or without traffic). Handler CPU time and the model are not in it.`,
    "",
    table(["call", "per run", "on the critical path", "latency each", "on the path", "source kind"], rows),
    "",
    `- **Modelled AWS time of a run besides the model: ${n(model.modelledMs, 0)} ms** on its critical path (${n(model.serialMs, 0)} ms if every call were awaited in turn), next to the local figure: ${local !== undefined ? `${n(local)} ms overhead (median, figure 1, unmetered stack)` : "n/a"}, and ${n(clean.localRunMs)} ms client-side per run on the metered stack.`,
    ...(shapes.length > 1 ? [`- The other shapes, critical path (every call in turn in brackets): ${shapes.filter((s) => s !== clean).map((s) => `${s.shape} ${n(s.latency!.modelledMs, 0)} ms (${n(s.latency!.serialMs, 0)} ms)`).join(", ")}.`] : []),
    ...Object.values(CALL_LATENCIES)
      .filter((latency) => model.rows.some((r) => r.category === latency.category))
      .map((latency) => `- ${latency.label}: ${latency.ms} ms, ${latency.kind}: ${latency.source} — <${latency.url}>`),
  ].join("\n");
}

/** Figure 1 again with AWS-like call latencies injected at the local edge: the critical path measured, not modelled. */
export function awsLatencySection(results: BenchResults): string | undefined {
  const measured = results.awsLatency;
  if (!measured) return undefined;
  const one = measured.shapes["one-call"];
  const tools = measured.shapes["tools-3"];
  const rows = Object.entries(measured.shapes).map(([shape, s]) => [shape, `${n(s.summary.runtime.median)} ms / ${n(s.summary.runtime.p95)} ms`, String(s.runtime.overheadMs.length), String(s.failures)]);
  const perRound = (tools.summary.runtime.median - one.summary.runtime.median) / TOOL_ROUNDS;
  const clean = results.cost?.shapes.find((s) => s.shape === "one-call")?.latency;
  const count = (category: LatencyCategory) => clean?.rows.find((r) => r.category === category)?.perRun ?? 0;
  const invokes = count("lambda-invoke");
  const transitions = count("state-transition");
  const notInjected = invokes * CALL_LATENCIES["lambda-invoke"].ms + transitions * CALL_LATENCIES["state-transition"].ms;
  const injected = (["dynamodb", "sqs-send", "sqs-receive", "sqs-other", "sfn-api", "post-to-connection"] as const).map((c) => `${CALL_LATENCIES[c].label} ${CALL_LATENCIES[c].ms} ms`).join("; ");
  return [
    "### The same run at AWS-like call latencies (measured)",
    "",
    `Figure 1's measurement (client-side time to the lifecycle end frame, minus the model server's time; ${measured.runs} runs per shape after ${measured.warmup} warm-up runs) on a stack whose edge answers every call a function makes after the latency the model above gives it (${injected}; \`callLatencyMs\` in \`infra/local/aws-edge.ts\`). Calls in flight together wait side by side and calls made in turn add up, so this measures the run's critical path at those latencies where the model can only bound it. Not injected (the local Lambda runtime and Step Functions engine are not behind the edge): ${n(invokes)} Lambda invoke overheads and ${n(transitions)} state transitions per clean run, ${n(notInjected, 0)} ms at the model's figures, to add.`,
    "",
    table(["shape", "overhead median / p95", "runs", "failed runs"], rows),
    "",
    `- One tool round at these latencies: ${n(perRound)} ms ((tools-3 - one-call) / ${TOOL_ROUNDS}, medians).`,
    `- A clean one-call run: ${n(one.summary.runtime.median)} ms measured + ${n(notInjected, 0)} ms not injected = about ${n(one.summary.runtime.median + notInjected, 0)} ms besides the model, against the model's upper bound above.`,
  ].join("\n");
}

export function observabilitySection(results: BenchResults): string | undefined {
  const shapes = results.cost?.shapes;
  if (!shapes?.length) return undefined;
  const rows = shapes.map((s) => {
    const o = s.observability;
    return [
      s.shape,
      `${n(o.logBytes.functions / 1024)} KB (measured)`,
      `${n((o.logBytes.platform + o.logBytes.accessLogs) / 1024)} KB (modelled)`,
      usd(o.logsDollars * 1000),
      n(o.tracesPerRun),
      usd(o.xrayDollarsAllSampled * 1000),
      usd(o.xrayDollarsDefaultSampling * 1000),
    ];
  });
  return [
    "### CloudWatch Logs and X-Ray (not in the table above)",
    "",
    `Function log bytes are measured: every line the handlers wrote at the template's log level, which CloudWatch Logs would ingest. Modelled: Lambda's own START/END/REPORT lines (${PLATFORM_LOG_BYTES_PER_INVOCATION} bytes per invocation) and one API Gateway access log line per request (${ACCESS_LOG_BYTES_PER_REQUEST} bytes). X-Ray is on by default (context \`tracing\`); traces per run are modelled as one per invocation (an upper bound: headers carried through SQS and Step Functions join them into fewer traces), and the default sampling rule records about ${XRAY_DEFAULT_SAMPLING_AT_SCALE * 100}% of them at scale.`,
    "",
    table(["shape", "function logs / run", "platform + access logs / run", "Logs $ / 1000 runs", "traces / run (upper bound)", "X-Ray $ / 1000 runs, all sampled", "X-Ray $ / 1000 runs, default sampling"], rows),
  ].join("\n");
}

export function openAiClientSection(result: OpenAiClientResult): string {
  if (!result.available) return ["## OpenClaw's client path", "", `Skipped: ${result.reason ?? "not available"}.`].join("\n");
  const ratio = (s: { median: number } | undefined) => (s && result.baseline ? `${n(s.median / result.baseline.median)}x` : "n/a");
  return [
    "## OpenClaw's client path (`POST /v1/chat/completions`)",
    "",
    `A client of OpenClaw's gateway calls \`POST /v1/chat/completions\` with the \`openai\` SDK; the same calls against the local stack, ${result.runs} runs per mode, each a fresh session (\`x-openclaw-session-key\`), timed client-side until the answer is complete, net of the model server's time, next to the direct-SDK floor of the same conversation. Failed calls: ${result.failures}.`,
    "",
    table(
      ["mode", "overhead median / p95", "vs the floor (median)"],
      [
        ["JSON", `${n(result.json?.median)} ms / ${n(result.json?.p95)} ms`, ratio(result.json)],
        ["stream: true (SSE)", `${n(result.stream?.median)} ms / ${n(result.stream?.p95)} ms`, ratio(result.stream)],
        ["direct SDK floor", `${n(result.baseline?.median, 2)} ms / ${n(result.baseline?.p95, 2)} ms`, "1x"],
      ],
    ),
  ].join("\n");
}
