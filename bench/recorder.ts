/**
 * Collects what the local stack did, so a window of work (one run, or K runs
 * of one shape) can be priced: SDK calls and consumed capacity (SdkMeter),
 * Lambda invocations and their durations (wrapped around every handler call),
 * Step Functions state transitions and executions (the local engine's events).
 */
import { performance } from "node:perf_hooks";
import { FUNCTION_SPECS, type FunctionKey } from "../infra/functions";
import type { LocalExecutionEvent } from "../infra/local/step-functions";
import type { EdgeCall } from "../infra/local/aws-edge";
import type { LocalStackObserver } from "../infra/local/stack";
import { diffSnapshots, SdkMeter, type MeterSnapshot } from "../shared/aws/metering";
import { constructIdOf } from "../infra/function-keys";

/**
 * The sweeper runs on a schedule (one invocation a minute whatever the
 * traffic), so its work is the deployment's fixed cost, not a run's: the cost
 * tables leave it out and say so. A tick that lands inside a measured window
 * must not be billed to that window's runs either (one did in stop 26's full
 * run: the streaming figure's write requests went from 46 to 76). Its calls
 * and invocations are counted apart (`sweeperCalls`, `sweeperInvocations`).
 */
const SWEEPER_ROLE = constructIdOf("sweeper");

export interface LambdaTally {
  invocations: number;
  /** Sum of per-invocation billed durations (each rounded up to 1 ms, as Lambda bills). */
  billedMs: number;
}

export interface WindowUsage {
  sdk: MeterSnapshot;
  lambda: Partial<Record<FunctionKey, LambdaTally>>;
  /** States entered plus retries (Step Functions bills both). */
  stateTransitions: number;
  transitionsByState: Record<string, number>;
  executionsClosed: number;
  /** Invocations that ran past their function's timeout (Lambda would have killed them). */
  overTimeout: Partial<Record<FunctionKey, number>>;
  /** What the functions logged (CloudWatch Logs would ingest it): bytes and lines, per function. */
  logs: Partial<Record<string, { lines: number; bytes: number }>>;
}

/** One metered call, state entry or invocation at the time it finished (for the latency model's critical path). */
export interface TimedEvent {
  at: number;
  /** When a metered call reached the local edge (state entries and invocations are points at `at`). */
  startedAt?: number;
  /** `dynamodb:GetItem`, `sqs:SendMessage`, `states:StartExecution`, `execute-api:ManageConnections`, `state:<name>`, `lambda:<key>`. */
  what: string;
}

interface Mark {
  sdk: MeterSnapshot;
  invocation: number;
  transition: number;
  closed: number;
  log: number;
}

export class UsageRecorder {
  readonly meter: SdkMeter | undefined;
  private readonly invocations: { key: FunctionKey; ms: number }[] = [];
  private readonly transitions: string[] = [];
  private readonly logLines: { fn: string; bytes: number }[] = [];
  /** Every metered call, state entry and invocation with its finish time (only with `meter`). */
  readonly timeline: TimedEvent[] = [];
  /** Closed executions per execution name (= run id): more than one would be a duplicated run. */
  readonly executionsByName = new Map<string, number>();
  private closed = 0;
  /** The sweeper's metered calls and invocations, kept out of every window (SWEEPER_ROLE). */
  sweeperCalls = 0;
  sweeperInvocations = 0;

  constructor(options: { meter: boolean }) {
    this.meter = options.meter ? new SdkMeter() : undefined;
  }

  observer(): LocalStackObserver {
    return {
      ...(this.meter ? { meterCapacity: true, onEdgeCall: (call) => this.onEdgeCall(call) } : {}),
      onExecutionEvent: (event) => this.onExecutionEvent(event),
      aroundInvoke: async (key, invoke) => {
        const started = performance.now();
        try {
          return await invoke();
        } finally {
          if (key === "sweeper") this.sweeperInvocations += 1;
          this.invocations.push({ key, ms: performance.now() - started });
          if (this.meter && key !== "sweeper") this.timeline.push({ at: performance.now(), what: `lambda:${key}` });
        }
      },
    };
  }

  /** The stack's `functionLogs` sink: counts what each function logged (the lines are dropped). */
  readonly logSink = (fn: string, line: string): void => {
    this.logLines.push({ fn, bytes: Buffer.byteLength(line) + 1 });
  };

  mark(): Mark {
    return { sdk: this.meter?.snapshot() ?? {}, invocation: this.invocations.length, transition: this.transitions.length, closed: this.closed, log: this.logLines.length };
  }

  /** The timeline's entries that finished in [from, to] (performance.now() times). */
  timelineBetween(from: number, to: number): TimedEvent[] {
    return this.timeline.filter((event) => event.at >= from && event.at <= to);
  }

  since(mark: Mark): WindowUsage {
    const lambda: WindowUsage["lambda"] = {};
    for (const { key, ms } of this.invocations.slice(mark.invocation)) {
      if (key === "sweeper") continue;
      const tally = (lambda[key] ??= { invocations: 0, billedMs: 0 });
      tally.invocations += 1;
      tally.billedMs += Math.max(1, Math.ceil(ms));
    }
    const overTimeout: WindowUsage["overTimeout"] = {};
    for (const { key, ms } of this.invocations.slice(mark.invocation)) {
      if (ms > FUNCTION_SPECS[key].timeoutSeconds * 1000) overTimeout[key] = (overTimeout[key] ?? 0) + 1;
    }
    const transitionsByState: Record<string, number> = {};
    for (const name of this.transitions.slice(mark.transition)) transitionsByState[name] = (transitionsByState[name] ?? 0) + 1;
    return {
      sdk: diffSnapshots(mark.sdk, this.meter?.snapshot() ?? {}),
      lambda,
      stateTransitions: this.transitions.length - mark.transition,
      transitionsByState,
      executionsClosed: this.closed - mark.closed,
      overTimeout,
      logs: this.logsSince(mark.log),
    };
  }

  private logsSince(from: number): WindowUsage["logs"] {
    const logs: WindowUsage["logs"] = {};
    for (const { fn, bytes } of this.logLines.slice(from)) {
      const tally = (logs[fn] ??= { lines: 0, bytes: 0 });
      tally.lines += 1;
      tally.bytes += bytes;
    }
    return logs;
  }

  private onEdgeCall(call: EdgeCall): void {
    // Only the functions' calls (their roles); the harness's own admin calls are not the run's.
    if (!call.principalArn?.includes(":assumed-role/")) return;
    if (call.principalArn.includes(SWEEPER_ROLE)) {
      this.sweeperCalls += 1;
      return;
    }
    this.meter!.recordWire(call);
    const at = performance.now();
    this.timeline.push({ at, startedAt: at - call.durationMs, what: call.action });
  }

  private onExecutionEvent(event: LocalExecutionEvent): void {
    if (event.kind === "closed") {
      this.closed += 1;
      this.executionsByName.set(event.execution.name, (this.executionsByName.get(event.execution.name) ?? 0) + 1);
      return;
    }
    const type = event.event.type;
    if (type === "StateEntered" || type === "StateRetried") {
      const state = (event.event as { state?: { name?: string } }).state?.name ?? "?";
      this.transitions.push(type === "StateRetried" ? `${state} (retry)` : state);
      if (this.meter) this.timeline.push({ at: performance.now(), what: `state:${state}` });
    }
  }
}
