/**
 * Soak (issue 16): many runs over many sessions on the template-deployed
 * local stack, with scripted failures mixed in (429s, overloads, aborts,
 * interrupts), then the counts that must be zero: runs lost (not ended),
 * runs answered twice, lanes left busy; and how much the process's RSS grew.
 *
 *   node --expose-gc --import tsx bench/soak.ts --runs 1000 --sessions 100   (the long one; figures in BENCHMARKS.md)
 * Infrastructure faults (throttles, see SOAK_FAULTS) are mixed in unless `--no-faults` (the CI soak runs without them).
 * RSS growth is measured from the end of the first wave (warm) to the end, after a GC.
 * CI runs a short version (test/e2e/soak.test.ts).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { lastUserText } from "../test/support/chat-request";
import { parseArgs } from "node:util";
import { FaultPlan, type FaultRule } from "../infra/local/faults";
import { startLocalStack } from "../infra/local/stack";
import { getLane } from "../shared/aws/lanes";
import { getRun, TERMINAL_STATUSES, type RunRecord } from "../shared/aws/runs";
import { loadAgentConfig } from "../shared/config/config";
import { chatStreamBody } from "../test/support/fake-openai-server";
import { SoakTrace } from "./soak-trace";

export const FAILURES = ["none", "rate_limit", "overloaded", "abort", "interrupt"] as const;
type Failure = (typeof FAILURES)[number];

/** A run that ended, but later than `lateAfterMs` after it could start (its message accepted and its session's previous run ended). */
export interface LateRun {
  runId: string;
  sessionKey: string;
  status: string;
  /** From the moment it could start to its end. */
  delayMs: number;
  /** What happened to it (bench/soak-trace.ts): its functions' calls and its executions' states. */
  timeline: string[];
}

export interface SoakReport {
  runs: number;
  sessions: number;
  /** Runs that never ended (not terminal `lostAfterMs` after the wait for them began, nor after the stack went idle). */
  lost: number;
  lostRuns: { runId: string; sessionKey: string; status: string; timeline: string[] }[];
  /** Runs that ended later than `lateAfterMs` after they could start, with their delay and timeline. */
  late: LateRun[];
  /** How long runs took from the moment they could start to their end (ms). */
  ownTimeMs: { p50: number; p95: number; max: number };
  duplicated: number;
  stuckLanes: number;
  statuses: Record<string, number>;
  /** Runs that ended `error`, by their error (a scripted failure may end a run with a clear error). */
  errors: Record<string, number>;
  /** Infrastructure faults that fired (throttles on Lambda, DynamoDB, SQS, Step Functions). */
  faultsFired: number;
  rssGrowthMb: number;
  rssGrowthMbPer1000Runs: number;
  /** RSS after the first wave ended (warm) and after the last one, after a GC when `--expose-gc` is on. */
  rssWarmMb: number;
  rssEndMb: number;
  durationMs: number;
}

/**
 * Infrastructure faults mixed into the runs (re-armed as runs end, so they
 * spread over the soak): each is absorbed by the SDK's retries, a Task
 * Retry or RecoverAttempt (docs/fault-tolerance.md); none kills a sandbox
 * mid-stream (that would call the model twice for one message by design).
 */
const SOAK_FAULTS: FaultRule[] = [
  { at: "invoke", function: "attempt", effect: { kind: "throttle" } },
  { at: "invoke", function: "run-finalize", effect: { kind: "throttle" } },
  { at: "edge", caller: "attempt", action: "dynamodb:Query", effect: { kind: "throttle" }, times: 2 },
  { at: "edge", caller: "attempt", action: "dynamodb:PutItem", bodyIncludes: "ATTEMPT#", effect: { kind: "throttle", code: "ProvisionedThroughputExceededException" }, times: 3 },
  { at: "edge", caller: "rest-api", action: "sqs:SendMessage", effect: { kind: "throttle" } },
  { at: "edge", caller: "dispatcher", action: "states:StartExecution", effect: { kind: "throttle" } },
];

/** Requests in flight at once: more than this makes a 2-core machine answer 504 (the 29 s integration timeout). */
const INTAKE_CONCURRENCY = 10;

async function mapLimited<T, R>(items: T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    for (let index = next++; index < items.length; index = next++) results[index] = await work(items[index]);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/** RSS in MB, after a full GC when the process exposes one (node --expose-gc). */
function rssMb(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().rss / 1024 / 1024;
}

/** Answers by the message: `[rate_limit]` / `[overloaded]` fail the first call of that message, then answer. */
class SoakModel {
  readonly answers = new Map<string, number>();
  private readonly seen = new Set<string>();
  private readonly server = createServer((req, res) => void this.handle(req, res));
  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }
  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const text = await lastUserText(req);
    const id = /\{(m\d+)\}/.exec(text)?.[1] ?? "?";
    const first = !this.seen.has(id);
    this.seen.add(id);
    if (first && text.includes("[rate_limit]")) return json(res, 429, { error: { message: "Rate limit reached", type: "requests", code: "rate_limit_exceeded" } }, { "retry-after": "0" });
    if (first && text.includes("[overloaded]")) return json(res, 503, { error: { message: "The server is overloaded", type: "server_error", code: null } });
    this.answers.set(id, (this.answers.get(id) ?? 0) + 1);
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.end(chatStreamBody({ text: `Answer ${id}` }));
  }
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

/** A run slower than this (from when it could start) is reported late: the sweeper's tick is a minute, so a run that needed a repair shows here. */
const LATE_AFTER_MS = 60_000;
/** Longer than anything that still ends a run (the stuck-session sweeper's bound, async retries): a run not ended by then is lost. */
const LOST_AFTER_MS = 900_000;

export interface SoakOptions {
  runs: number;
  sessions: number;
  faults?: boolean;
  log?: (line: string) => void;
  lateAfterMs?: number;
  lostAfterMs?: number;
}

export async function runSoak(options: SoakOptions): Promise<SoakReport> {
  const model = new SoakModel();
  const baseURL = await model.start();
  const config = loadAgentConfig({ OPENAI_API_KEY: "soak", OPENAI_BASE_URL: baseURL, MODEL: "openai/gpt-4o" });
  const plan = options.faults ? new FaultPlan() : undefined;
  const trace = new SoakTrace();
  const stack = await startLocalStack({ config, waitStateMs: { WaitBeforeRetry: 50 }, asyncRetryDelayMs: 50, observe: trace.observer(), ...(plan ? { faults: plan } : {}) });
  const started = Date.now();
  try {
    const headers = { authorization: `Bearer ${stack.authToken}`, "content-type": "application/json" };
    // A client retries a request whose connection failed or that was throttled (429) or refused for a moment (5xx):
    // safe, every request carries its idempotency key.
    const post = async (path: string, body: unknown): Promise<any> => {
      for (let attempt = 1; ; attempt += 1) {
        let why: string;
        try {
          const res = await fetch(`${stack.restUrl}${path}`, { method: "POST", headers, body: JSON.stringify(body) });
          const answer = (await res.json().catch(() => ({}))) as any;
          if (res.ok) return answer;
          why = `${res.status} ${JSON.stringify(answer).slice(0, 200)}`;
          if (res.status !== 429 && res.status < 500) throw new Error(`${path} answered ${why}`);
        } catch (error) {
          if (String(error).includes(" answered ")) throw error;
          why = String((error as { cause?: unknown }).cause ?? error);
        }
        // Patient: on a loaded machine the authorizer or the integration may time out for a while.
        if (attempt >= 30) throw new Error(`${path} kept failing: ${why}`);
        options.log?.(`retrying ${path} after ${why}`);
        await new Promise((resolve) => setTimeout(resolve, Math.min(5_000, 500 * attempt)));
      }
    };
    const runIds: string[] = [];
    for (let wave = 0; wave * options.sessions < options.runs; wave += 1) {
      const batch = await mapLimited(
        Array.from({ length: Math.min(options.sessions, options.runs - wave * options.sessions) }, (_, s) => s),
        INTAKE_CONCURRENCY,
        async (s) => {
          const n = wave * options.sessions + s;
          const failure: Failure = FAILURES[n % FAILURES.length];
          const queue = failure === "interrupt" ? { queue: { mode: "interrupt" } } : { queue: { mode: "followup" } };
          const accepted = await post("/v1/agent", { sessionKey: `soak-${s}`, message: `{m${n}} [${failure}] hello`, idempotencyKey: `soak-run-${n}`, ...queue });
          if (typeof accepted.runId !== "string") throw new Error(`intake answered no runId: ${JSON.stringify(accepted)}`);
          if (failure === "abort") await post(`/v1/runs/${accepted.runId}/abort`, {});
          return accepted.runId as string;
        },
      );
      runIds.push(...batch);
      options.log?.(`accepted ${runIds.length}/${options.runs}`);
    }
    const lateAfterMs = options.lateAfterMs ?? LATE_AFTER_MS;
    const records: (RunRecord | undefined)[] = [];
    const late: LateRun[] = [];
    const sessionOf = (index: number) => `soak-${index % options.sessions}`;
    // When run `index` could start: accepted, and its session's previous run (accepted just before it) ended.
    const readyAt = (index: number, run: RunRecord) => Math.max(run.acceptedAt, records[index - options.sessions]?.endedAt ?? 0);
    let rssWarm = 0;
    const rearmEvery = Math.max(1, Math.floor(options.sessions / 2));
    for (const [index, runId] of runIds.entries()) {
      const run = await waitTerminal(stack, runId, options.lostAfterMs ?? LOST_AFTER_MS);
      records[index] = run;
      if (run) {
        const ready = readyAt(index, run);
        const delayMs = (run.endedAt ?? Date.now()) - ready;
        if (delayMs > lateAfterMs) {
          late.push({ runId, sessionKey: sessionOf(index), status: run.status, delayMs, timeline: trace.timeline(runId, sessionOf(index), ready - 5_000) });
          options.log?.(`late: ${runId} (${sessionOf(index)}) ended ${run.status} ${Math.round(delayMs / 1000)} s after it could start:\n  ${late[late.length - 1].timeline.join("\n  ")}`);
        } else trace.forget(runId, sessionOf(index), (run.endedAt ?? Date.now()) - 1_000);
      } else options.log?.(`not ended yet: ${runId} (${sessionOf(index)})`);
      if (index % rearmEvery === 0) {
        // A fresh set, not one more: rules that did not fire yet (run-finalize is rarely invoked) would
        // pile up and then all hit the one run that next makes that call.
        plan?.clear();
        plan?.add(...SOAK_FAULTS);
      }
      if (index + 1 === Math.min(options.sessions, runIds.length)) rssWarm = rssMb();
      if ((index + 1) % 100 === 0) options.log?.(`ended ${index + 1}/${runIds.length} (rss ${Math.round(rssMb())} MB)`);
    }
    plan?.clear();
    await stack.idle();
    // A run the wait gave up on may still have ended (it is then late, with its delay); what is still not terminal is lost.
    const lostRuns: SoakReport["lostRuns"] = [];
    for (const [index, runId] of runIds.entries()) {
      if (records[index]) continue;
      const run = await getRun(stack.deps.db, runId);
      if (run && TERMINAL_STATUSES.has(run.status)) {
        records[index] = run;
        late.push({ runId, sessionKey: sessionOf(index), status: run.status, delayMs: (run.endedAt ?? 0) - readyAt(index, run), timeline: trace.timeline(runId, sessionOf(index)) });
      } else lostRuns.push({ runId, sessionKey: sessionOf(index), status: run?.status ?? "missing", timeline: trace.timeline(runId, sessionOf(index)) });
    }
    const statuses: Record<string, number> = {};
    const errors: Record<string, number> = {};
    for (const run of records) {
      if (!run) continue;
      statuses[run.status] = (statuses[run.status] ?? 0) + 1;
      if (run.status === "error") {
        const reason = String(run.error ?? "?").slice(0, 80);
        errors[reason] = (errors[reason] ?? 0) + 1;
      }
    }
    const ownTimes = records.flatMap((run, index) => (run?.endedAt ? [run.endedAt - readyAt(index, run)] : [])).sort((a, b) => a - b);
    let stuckLanes = 0;
    for (let s = 0; s < options.sessions; s += 1) {
      const lane = await getLane(stack.deps.db, `soak-${s}`);
      if (lane.activeRunId !== undefined || lane.waiting.length > 0) stuckLanes += 1;
    }
    const rssEnd = rssMb();
    const rssGrowthMb = rssEnd - rssWarm;
    const measuredRuns = Math.max(1, runIds.length - Math.min(options.sessions, runIds.length));
    return {
      runs: runIds.length,
      sessions: options.sessions,
      lost: lostRuns.length,
      lostRuns,
      late,
      ownTimeMs: { p50: percentile(ownTimes, 0.5), p95: percentile(ownTimes, 0.95), max: ownTimes[ownTimes.length - 1] ?? 0 },
      duplicated: [...model.answers.values()].filter((count) => count > 1).length,
      stuckLanes,
      statuses,
      errors,
      faultsFired: plan?.hits.length ?? 0,
      rssGrowthMb: Math.round(rssGrowthMb * 10) / 10,
      rssGrowthMbPer1000Runs: Math.round((rssGrowthMb / measuredRuns) * 1000 * 10) / 10,
      rssWarmMb: Math.round(rssWarm),
      rssEndMb: Math.round(rssEnd),
      durationMs: Date.now() - started,
    };
  } finally {
    await stack.close();
    await model.close();
  }
}

function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}

async function waitTerminal(stack: Awaited<ReturnType<typeof startLocalStack>>, runId: string, boundMs: number) {
  const deadline = Date.now() + boundMs;
  for (;;) {
    const run = await getRun(stack.deps.db, runId);
    if (run && TERMINAL_STATUSES.has(run.status)) return run;
    if (Date.now() > deadline) return undefined;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: { runs: { type: "string", default: "1000" }, sessions: { type: "string", default: "100" }, "no-faults": { type: "boolean", default: false }, "late-after-s": { type: "string", default: String(LATE_AFTER_MS / 1000) } },
  });
  const log = (line: string) => process.stderr.write(`${new Date().toISOString()} ${line}\n`);
  runSoak({ runs: Number(values.runs), sessions: Number(values.sessions), faults: !values["no-faults"], lateAfterMs: Number(values["late-after-s"]) * 1000, log }).then(
    (report) => process.stdout.write(`${JSON.stringify(report, null, 2)}\n`),
    (error: unknown) => {
      process.stderr.write(`soak failed: ${String(error)}\n`);
      process.exit(1);
    },
  );
}
