/**
 * A local Step Functions (Standard workflows) for the one-process stack: a
 * loopback endpoint that the real `@aws-sdk/client-sfn` talks to
 * (StartExecution, DescribeExecution, StopExecution, ListExecutions), with
 * executions run in-process by aws-local-stepfunctions and Task states
 * invoking our handlers like Lambda.
 *
 * Mirrored from AWS (see the modules under ./step-functions/ for details):
 * Standard StartExecution idempotency; execution names (1-80 chars, none of
 * AWS's forbidden characters); the 256 KiB quota on execution input (
 * InvalidExecutionInput), task input/result and state output
 * (States.DataLimitExceeded, never caught or retried); Task errors named as
 * Step Functions names them, Catch getting `{Error, Cause}` with the Lambda
 * runtime's JSON payload as Cause; Task TimeoutSeconds as States.Timeout;
 * a Task without TimeoutSeconds has none (the library's 60 s default is
 * overridden); Wait states really wait.
 *
 * Not supported: `.sync` / `.waitForTaskToken` integrations (and so the
 * task-token API), service integrations other than `lambda:invoke`,
 * `$$.State.*` / `$$.Task.*` in the Context Object, HeartbeatSeconds,
 * GetExecutionHistory, redrive, Express workflows, JSONata. Execution names
 * become reusable once the closed execution falls out of the bounded history
 * (AWS: 90 days); only the newest closed executions keep their input and
 * output for DescribeExecution (older ones: `inputDetails.included` false).
 */
import "./step-functions/polyfill";
import type { LocalLogger } from "./lambda-context";
import { sfnOperations } from "./step-functions/api";
import { TaskTokenRegistry } from "./step-functions/task-tokens";
import { DEFAULT_MAX_CLOSED_EXECUTIONS, DEFAULT_MAX_DETAILED_CLOSED_EXECUTIONS, ExecutionStore, type ExecutionSummary } from "./step-functions/executions";
import { startJsonProtocolServer } from "./step-functions/http";
import { createExecutionJournal, NO_JOURNAL, resumePoint, type ExecutionJournal } from "./step-functions/journal";
import { type LocalStateMachine, MachineRegistry } from "./step-functions/machines";
import { createRunner, type LocalExecutionEvent, type Runner, type TaskFault, type TaskFaultHook } from "./step-functions/runner";

export type { LocalStateMachine } from "./step-functions/machines";
export type { TaskHandler } from "./step-functions/tasks";
export type { ExecutionStatus, ExecutionSummary } from "./step-functions/executions";
export type { EngineEvent, LocalExecutionEvent, TaskFault, TaskFaultHook } from "./step-functions/runner";
export { STATE_PAYLOAD_LIMIT_BYTES } from "./step-functions/limits";

export interface LocalStepFunctions {
  /** Give this to `new SFNClient({ endpoint })`. */
  endpoint: string;
  /** Registers (or replaces) a state machine; returns its stateMachineArn. */
  register(machine: LocalStateMachine): string;
  /** Running and remembered closed executions, newest first. */
  executions(): ExecutionSummary[];
  /** Resolves when no execution runs and no task invocation is in flight. */
  waitForIdle(): Promise<void>;
  /**
   * After a restart with the same journal folder (and once the state machines
   * are registered again): goes on with every execution that was running.
   * Returns their names.
   */
  resumeJournaled(): string[];
  /**
   * Fault injection (tests): the running execution of this name dies now, in
   * the middle of whatever Task it runs (that Task's function goes on, as a
   * Lambda does in AWS). False when no running execution has that name.
   */
  failExecution(name: string, fault: TaskFault): boolean;
  /** Stops serving, aborts running executions, waits briefly for their tasks. */
  close(): Promise<void>;
}

export interface StartLocalStepFunctionsOptions {
  /** Interface to listen on; loopback by default. */
  host?: string;
  /** 0 picks a free port. */
  port: number;
  region: string;
  accountId: string;
  onExecutionEvent?: (event: LocalExecutionEvent) => void;
  logger?: LocalLogger;
  /** How many closed executions to remember (default 1000). */
  maxClosedExecutions?: number;
  /** How many of them keep their input and output; older ones keep a summary (default 50; step-functions/executions.ts). */
  maxDetailedClosedExecutions?: number;
  /** Keep running executions here so they survive a restart (step-functions/journal.ts); in memory when absent. */
  journalDir?: string;
  /** Fault injection (tests): asked as each Task state is entered (step-functions/runner.ts TaskFault). */
  taskFault?: TaskFaultHook;
}

/** How long close() waits for abandoned task invocations before giving up on them. */
const CLOSE_DRAIN_TIMEOUT_MS = 10_000;

export async function startLocalStepFunctions(options: StartLocalStepFunctionsOptions): Promise<LocalStepFunctions> {
  const scope = { region: options.region, accountId: options.accountId };
  const store = new ExecutionStore(options.maxClosedExecutions ?? DEFAULT_MAX_CLOSED_EXECUTIONS, options.maxDetailedClosedExecutions ?? DEFAULT_MAX_DETAILED_CLOSED_EXECUTIONS);
  const tokens = new TaskTokenRegistry();
  const registry = new MachineRegistry(scope, (work) => store.track(work), tokens);
  const journal = options.journalDir ? createExecutionJournal(options.journalDir) : NO_JOURNAL;
  const runner = createRunner({ store, scope, emit: safeEmitter(options), logger: options.logger, journal, ...(options.taskFault ? { taskFault: options.taskFault } : {}) });
  const server = await startJsonProtocolServer({
    host: options.host ?? "127.0.0.1",
    port: options.port,
    operations: sfnOperations({ scope, registry, store, runner, tokens }),
    logger: options.logger,
  });
  return {
    endpoint: server.endpoint,
    register: (machine) => registry.register(machine),
    executions: () => store.list(),
    waitForIdle: () => store.waitForIdle(),
    resumeJournaled: () => resumeJournaled(journal, store, registry, runner),
    failExecution: (name, fault) => {
      const record = store.runningRecords().find((candidate) => candidate.name === name);
      if (record) runner.fault(record, fault, "fault injected: the service failed the execution while a Task ran");
      return record !== undefined;
    },
    close: async () => {
      await server.close();
      // A closing stack's executions stay journaled: the next start goes on with them.
      if (options.journalDir) runner.detachAll();
      else await abortAll(store, runner, options.logger);
    },
  };
}

function resumeJournaled(journal: ExecutionJournal, store: ExecutionStore, registry: MachineRegistry, runner: Runner): string[] {
  const resumed: string[] = [];
  for (const entry of journal.load()) {
    if (store.find(entry.executionArn)) continue;
    const record = {
      executionArn: entry.executionArn,
      stateMachineArn: entry.stateMachineArn,
      name: entry.name,
      status: "RUNNING" as const,
      startDate: new Date(entry.startDate),
      input: entry.input,
      inputValue: JSON.parse(entry.input) as unknown,
    };
    store.add(record);
    const machine = registry.get(entry.stateMachineArn);
    runner.resume(record, machine, machine ? resumePoint(entry.at, machine.states) : { kind: "unresumable", cause: "Its state machine is no longer deployed." });
    resumed.push(entry.name);
  }
  return resumed;
}

/** A listener that throws must not break an execution. */
function safeEmitter(options: StartLocalStepFunctionsOptions): (event: LocalExecutionEvent) => void {
  return (event) => {
    try {
      options.onExecutionEvent?.(event);
    } catch (error) {
      options.logger?.error("local step functions: onExecutionEvent threw", { error: String(error) });
    }
  };
}

async function abortAll(store: ExecutionStore, runner: Runner, logger: LocalLogger | undefined): Promise<void> {
  for (const record of store.runningRecords()) {
    runner.stop(record, { error: "States.Aborted", cause: "The local Step Functions was closed." });
  }
  let timer: NodeJS.Timeout | undefined;
  const gaveUp = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(true), CLOSE_DRAIN_TIMEOUT_MS);
  });
  const timedOut = await Promise.race([store.waitForIdle().then(() => false), gaveUp]);
  clearTimeout(timer);
  if (timedOut) logger?.warn("local step functions: closed with task invocations still running");
}
