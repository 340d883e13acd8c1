/**
 * The sweeper's two EventBridge triggers, locally: a timer standing in for
 * the every-minute schedule rule, and the local Step Functions' "closed"
 * notifications standing in for the "Step Functions Execution Status
 * Change" rule (FAILED / TIMED_OUT / ABORTED executions). Both invoke the
 * same handler with events in EventBridge's shape.
 */
import { randomUUID } from "node:crypto";
import type { LocalExecutionEvent } from "./step-functions";

export interface LocalSweeperOptions {
  invoke: (event: Record<string, unknown>) => Promise<unknown>;
  /** The schedule; 0 turns the timer off (execution events still arrive). */
  intervalMs: number;
  region: string;
  accountId: string;
  onError?: (error: unknown) => void;
  /** Execution statuses the EventBridge rule's pattern matches (default FAILED, TIMED_OUT, ABORTED). */
  statuses?: readonly string[];
  /** Only executions of this state machine (the pattern's detail.stateMachineArn). */
  stateMachineArns?: readonly string[];
}

export interface LocalSweeper {
  /** Give every local Step Functions execution event to this. */
  onExecutionEvent(event: LocalExecutionEvent): void;
  /** Runs one scheduled sweep now (tests). */
  sweepNow(): Promise<unknown>;
  /** Resolves when no sweeper invocation is in flight. */
  idle(): Promise<void>;
  stop(): Promise<void>;
}

const ENDED_STATUSES = new Set(["FAILED", "TIMED_OUT", "ABORTED"]);

export function startLocalSweeper(options: LocalSweeperOptions): LocalSweeper {
  const inFlight = new Set<Promise<unknown>>();
  let stopped = false;
  let ticking: Promise<unknown> | undefined;
  const track = (work: Promise<unknown>): Promise<unknown> => {
    const settled = work.catch((error: unknown) => options.onError?.(error));
    inFlight.add(settled);
    void settled.finally(() => inFlight.delete(settled));
    return settled;
  };
  const sweepNow = () => track(options.invoke(scheduledEvent(options)));
  const timer =
    options.intervalMs > 0
      ? setInterval(() => {
          // One sweep at a time, like a schedule whose target is still busy.
          if (stopped || ticking) return;
          ticking = sweepNow().finally(() => (ticking = undefined));
        }, options.intervalMs)
      : undefined;
  timer?.unref();
  return {
    onExecutionEvent: (event) => {
      if (stopped || event.kind !== "closed") return;
      if (!(options.statuses ? options.statuses.includes(event.execution.status) : ENDED_STATUSES.has(event.execution.status))) return;
      if (options.stateMachineArns && !options.stateMachineArns.includes(event.execution.stateMachineArn)) return;
      void track(options.invoke(statusChangeEvent(options, event.execution)));
    },
    sweepNow,
    idle: async () => {
      while (inFlight.size > 0) await Promise.all([...inFlight]);
    },
    stop: async () => {
      stopped = true;
      if (timer) clearInterval(timer);
      while (inFlight.size > 0) await Promise.all([...inFlight]);
    },
  };
}

function scheduledEvent(options: LocalSweeperOptions): Record<string, unknown> {
  return {
    version: "0",
    id: randomUUID(),
    "detail-type": "Scheduled Event",
    source: "aws.events",
    account: options.accountId,
    time: new Date().toISOString(),
    region: options.region,
    resources: [`arn:aws:events:${options.region}:${options.accountId}:rule/local-sweeper-schedule`],
    detail: {},
  };
}

function statusChangeEvent(options: LocalSweeperOptions, execution: Extract<LocalExecutionEvent, { kind: "closed" }>["execution"]): Record<string, unknown> {
  return {
    version: "0",
    id: randomUUID(),
    "detail-type": "Step Functions Execution Status Change",
    source: "aws.states",
    account: options.accountId,
    time: new Date().toISOString(),
    region: options.region,
    resources: [execution.executionArn],
    detail: {
      executionArn: execution.executionArn,
      stateMachineArn: execution.stateMachineArn,
      name: execution.name,
      status: execution.status,
      startDate: execution.startDate.getTime(),
      stopDate: execution.stopDate?.getTime() ?? null,
      input: execution.input,
      output: execution.output ?? null,
      error: execution.error ?? null,
      cause: execution.cause ?? null,
    },
  };
}
