/**
 * The executions the local Step Functions knows: running ones, and a bounded
 * history of closed ones (AWS keeps closed Standard executions for 90 days;
 * a long-lived local process must not grow without bound). Also answers
 * "is anything still running?" for tests and shutdown.
 *
 * Closed executions are kept in two tiers so the store reaches its steady
 * size after a few dozen runs instead of a thousand: the newest
 * `maxDetailed` keep their input and output; older ones, up to `maxClosed`,
 * keep a summary (name, status, dates, error and cause), which is what the
 * sweeper's DescribeExecution reads and what makes a reused name
 * ExecutionAlreadyExists. The parsed input is needed only while running
 * (StartExecution's idempotency check) and is dropped at close.
 */

export type ExecutionStatus = "RUNNING" | "SUCCEEDED" | "FAILED" | "TIMED_OUT" | "ABORTED";
export type ClosedStatus = Exclude<ExecutionStatus, "RUNNING">;

export interface ExecutionSummary {
  executionArn: string;
  stateMachineArn: string;
  name: string;
  status: ExecutionStatus;
  startDate: Date;
  stopDate?: Date;
  /** The execution input as given to StartExecution; absent once an old closed execution is summarized. */
  input?: string;
  output?: string;
  error?: string;
  cause?: string;
}

export interface ExecutionOutcome {
  status: ClosedStatus;
  output?: string;
  error?: string;
  cause?: string;
}

export interface ExecutionRecord extends ExecutionSummary {
  /** The parsed input, for the idempotency comparison. */
  inputValue: unknown;
}

export const DEFAULT_MAX_CLOSED_EXECUTIONS = 1000;
/** Closed executions that keep their input and output (a run's few DescribeExecution reads come soon after it closes). */
export const DEFAULT_MAX_DETAILED_CLOSED_EXECUTIONS = 50;

export class ExecutionStore {
  private readonly records = new Map<string, ExecutionRecord>();
  /** Closed executions, oldest first: all remembered, and those still holding input and output. */
  private readonly closedOrder: string[] = [];
  private readonly detailedOrder: string[] = [];
  private readonly maxDetailed: number;
  private readonly idleWaiters: Array<() => void> = [];
  private running = 0;
  private pendingWork = 0;

  constructor(
    private readonly maxClosed = DEFAULT_MAX_CLOSED_EXECUTIONS,
    maxDetailed = DEFAULT_MAX_DETAILED_CLOSED_EXECUTIONS,
  ) {
    this.maxDetailed = Math.min(maxDetailed, maxClosed);
  }

  find(executionArn: string): ExecutionRecord | undefined {
    return this.records.get(executionArn);
  }

  add(record: ExecutionRecord): void {
    this.records.set(record.executionArn, record);
    this.running += 1;
  }

  /** Closes a running execution; the first outcome wins, later ones are ignored. */
  close(record: ExecutionRecord, outcome: ExecutionOutcome): boolean {
    if (record.status !== "RUNNING") return false;
    Object.assign(record, outcome, { stopDate: new Date() });
    record.inputValue = undefined;
    this.running -= 1;
    this.closedOrder.push(record.executionArn);
    this.detailedOrder.push(record.executionArn);
    this.summarizeOldDetailed();
    this.evictOldestClosed();
    this.notifyIfIdle();
    return true;
  }

  /** Fault injection: a running execution vanishes (no outcome; DescribeExecution no longer finds it). */
  forget(record: ExecutionRecord): void {
    if (record.status !== "RUNNING") return;
    this.records.delete(record.executionArn);
    record.status = "ABORTED"; // the detached record: a late outcome for it is ignored
    this.running -= 1;
    this.notifyIfIdle();
  }

  list(stateMachineArn?: string, status?: ExecutionStatus): ExecutionSummary[] {
    return [...this.records.values()]
      .filter((record) => stateMachineArn === undefined || record.stateMachineArn === stateMachineArn)
      .filter((record) => status === undefined || record.status === status)
      .sort((a, b) => b.startDate.getTime() - a.startDate.getTime())
      .map(toSummary);
  }

  runningRecords(): ExecutionRecord[] {
    return [...this.records.values()].filter((record) => record.status === "RUNNING");
  }

  /** Counts work (a task invocation, a pending notification) as activity until it settles. */
  track<T>(work: Promise<T>): Promise<T> {
    this.pendingWork += 1;
    return work.finally(() => {
      this.pendingWork -= 1;
      this.notifyIfIdle();
    });
  }

  isIdle(): boolean {
    return this.running === 0 && this.pendingWork === 0;
  }

  /**
   * Resolves when no execution runs and no task invocation is in flight
   * (a stopped execution's task may still be finishing).
   */
  waitForIdle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private notifyIfIdle(): void {
    if (!this.isIdle()) return;
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  /** Sizes (tests): executions remembered, closed ones still holding input and output. */
  sizes(): { records: number; closed: number; detailed: number } {
    return { records: this.records.size, closed: this.closedOrder.length, detailed: this.detailedOrder.length };
  }

  private summarizeOldDetailed(): void {
    while (this.detailedOrder.length > this.maxDetailed) {
      const record = this.records.get(this.detailedOrder.shift()!);
      if (record) {
        delete record.input;
        delete record.output;
      }
    }
  }

  private evictOldestClosed(): void {
    while (this.closedOrder.length > this.maxClosed) {
      const arn = this.closedOrder.shift();
      if (arn !== undefined) this.records.delete(arn);
    }
  }
}

export function toSummary(record: ExecutionRecord): ExecutionSummary {
  const { executionArn, stateMachineArn, name, status, startDate, stopDate, input, output, error, cause } = record;
  return { executionArn, stateMachineArn, name, status, startDate, stopDate, input, output, error, cause };
}
