/**
 * Runs executions with aws-local-stepfunctions and turns how the library
 * settles into Step Functions' execution statuses. Every path ends in a
 * closed status: a library crash is FAILED (States.Runtime), never a hang.
 */
import {
  ExecutionAbortedError,
  ExecutionError,
  ExecutionTimeoutError,
  type StateMachine,
} from "aws-local-stepfunctions";
import type { LocalLogger } from "../lambda-context";
import type { ArnScope } from "./arns";
import { STATES_DATA_LIMIT_EXCEEDED, STATES_RUNTIME, STATES_TIMEOUT } from "./errors";
import {
  type ExecutionOutcome,
  type ExecutionRecord,
  type ExecutionStore,
  type ExecutionSummary,
  toSummary,
} from "./executions";
import { dataLimitCause, exceedsStateLimit } from "./limits";
import type { ExecutionJournal, ResumeAt } from "./journal";
import type { RegisteredMachine } from "./machines";
import type { JsonValue, TaskOverride } from "./tasks";
import { TASK_TOKEN_PLACEHOLDER } from "./task-tokens";

type EngineRun = ReturnType<StateMachine["run"]>;
/** One entry of the library's execution event log (StateEntered, StateExited, ...). */
export type EngineEvent = EngineRun["eventLogs"] extends AsyncGenerator<infer E> ? E : never;

export type LocalExecutionEvent =
  | { kind: "state"; executionArn: string; stateMachineArn: string; event: EngineEvent }
  | { kind: "closed"; execution: ExecutionSummary };

export interface StopDetail {
  error?: string;
  cause?: string;
}

export interface Runner {
  launch(record: ExecutionRecord, machine: RegisteredMachine): void;
  /** Goes on with an execution the journal kept across a restart (journal.ts resumePoint). */
  resume(record: ExecutionRecord, machine: RegisteredMachine | undefined, at: ResumeAt): void;
  /** Stops running every execution without closing it (a journaled stack shutting down: the next start resumes them). */
  detachAll(): void;
  /** StopExecution: ABORTED now, with the caller's error and cause; no-op when closed. */
  stop(record: ExecutionRecord, detail: StopDetail): void;
  /** Fault injection: the running execution dies now (TaskFault), whatever Task it is in; that Task's function goes on. */
  fault(record: ExecutionRecord, fault: TaskFault, cause: string): void;
}

/**
 * Fault injection (infra/local/faults.ts): what happens to an execution as it
 * enters a Task state. `runtime_failure`: the execution FAILS with
 * States.Runtime (the service's own failure, its "closed" event is sent);
 * `lost`: the execution is gone without a trace or an event (as if deleted).
 * Either way the Task's function is not invoked.
 */
export type TaskFault = "runtime_failure" | "lost";
export type TaskFaultHook = (task: { executionArn: string; name: string; state: string }) => TaskFault | undefined;

export interface RunnerDeps {
  store: ExecutionStore;
  scope: ArnScope;
  emit: (event: LocalExecutionEvent) => void;
  logger?: LocalLogger;
  journal: ExecutionJournal;
  taskFault?: TaskFaultHook;
}

/** How long a closed execution's "closed" event waits for its event log to drain. */
const DRAIN_GRACE_MS = 1_000;

interface RunHandle {
  abort: () => void;
  /** Settles when the library's event log is fully read. */
  drained: Promise<void>;
}

export function createRunner(deps: RunnerDeps): Runner {
  const handles = new Map<string, RunHandle>();
  let detached = false;
  const finish = (record: ExecutionRecord, outcome: ExecutionOutcome): void => {
    if (record.status !== "RUNNING" || detached) return;
    deps.journal.closed(record.executionArn);
    const handle = handles.get(record.executionArn);
    handles.delete(record.executionArn);
    // Tracked before the status changes so that waitForIdle also waits for
    // the "closed" event, which comes after the execution's last state event.
    let closed: ExecutionSummary | undefined;
    void deps.store.track(
      settleWithin(handle?.drained, DRAIN_GRACE_MS).then(() => {
        deps.emit({ kind: "closed", execution: closed ?? toSummary(record) });
      }),
    );
    deps.store.close(record, outcome);
    // Taken now: by the time the event is sent, the store may have summarized the record (dropped its input and output).
    closed = toSummary(record);
  };
  // An execution that vanishes: no outcome, no "closed" event, DescribeExecution no longer knows it.
  const lose = (record: ExecutionRecord): void => {
    if (record.status !== "RUNNING") return;
    deps.journal.closed(record.executionArn);
    const abort = handles.get(record.executionArn)?.abort;
    handles.delete(record.executionArn);
    deps.store.forget(record); // before the abort: the engine's rejection then finds it closed
    abort?.();
  };
  const fail = (record: ExecutionRecord, outcome: ExecutionOutcome): void => {
    const abort = handles.get(record.executionArn)?.abort;
    finish(record, outcome);
    abort?.();
  };
  const faults: FaultActions = { finish, fail, lose };
  return {
    launch: (record, machine) => {
      deps.journal.started({ executionArn: record.executionArn, stateMachineArn: machine.arn, name: record.name, input: record.input ?? JSON.stringify(record.inputValue), startDate: record.startDate.getTime() });
      const handle = launch(record, machine, deps, faults, { engine: machine.engine, input: record.inputValue });
      if (handle && record.status === "RUNNING") handles.set(record.executionArn, handle);
    },
    resume: (record, machine, at) => {
      if (at.kind === "succeeded") return finish(record, successOutcome(at.output));
      if (at.kind === "unresumable" || !machine) {
        return finish(record, { status: "FAILED", error: STATES_RUNTIME, cause: at.kind === "unresumable" ? at.cause : "Its state machine is not deployed." });
      }
      const from = at.kind === "state" ? { engine: machine.engineFrom(at.state), input: at.input } : { engine: machine.engine, input: record.inputValue };
      const handle = launch(record, machine, deps, faults, from);
      if (handle && record.status === "RUNNING") handles.set(record.executionArn, handle);
    },
    detachAll: () => {
      detached = true;
      for (const handle of handles.values()) handle.abort();
      handles.clear();
    },
    stop: (record, detail) => {
      const abort = handles.get(record.executionArn)?.abort;
      finish(record, { status: "ABORTED", ...detail });
      abort?.();
    },
    fault: (record, fault, cause) => applyFault(faults, record, fault, cause),
  };
}

interface FaultActions {
  finish: (record: ExecutionRecord, outcome: ExecutionOutcome) => void;
  /** Closes it with this outcome and stops its engine. */
  fail: (record: ExecutionRecord, outcome: ExecutionOutcome) => void;
  lose: (record: ExecutionRecord) => void;
}

function launch(
  record: ExecutionRecord,
  machine: RegisteredMachine,
  deps: RunnerDeps,
  actions: FaultActions,
  from: { engine: StateMachine; input: unknown },
): RunHandle | undefined {
  const { finish } = actions;
  // Set when the runner itself fails the execution (a state output over the
  // quota): the library only knows "aborted", the record must say why.
  let failure: StopDetail | undefined;
  try {
    const run = from.engine.run(from.input as JsonValue, {
      overrides: { taskResourceLocalHandlers: withTaskFaults(journaled(machine.overrides, record.executionArn, deps.journal), record, deps.taskFault, actions), ...(machine.waitStateMs ? { waitTimeOverrides: machine.waitStateMs } : {}) },
      context: contextObject(record, machine, deps.scope),
    });
    const onEvent = (event: EngineEvent): void => {
      deps.emit({ kind: "state", executionArn: record.executionArn, stateMachineArn: machine.arn, event });
      const overLimit = oversizedStateOutput(event);
      if (overLimit && !failure) {
        failure = { error: STATES_DATA_LIMIT_EXCEEDED, cause: overLimit };
        run.abort();
      }
    };
    const drained = consumeEvents(run.eventLogs, onEvent, deps.logger);
    run.result.then(
      (output) => finish(record, successOutcome(output)),
      (error: unknown) => finish(record, failureOutcome(error, failure)),
    );
    return { abort: run.abort, drained };
  } catch (error) {
    finish(record, failureOutcome(error, undefined));
    return undefined;
  }
}

/** The Task handlers of one execution, recording where it is before and after each Task. */
function journaled(overrides: Record<string, TaskOverride>, executionArn: string, journal: ExecutionJournal): Record<string, TaskOverride> {
  return Object.fromEntries(
    Object.entries(overrides).map(([state, invoke]) => [
      state,
      async (input: JsonValue) => {
        journal.taskEntered(executionArn, state, input);
        const output = await invoke(input);
        journal.taskSucceeded(executionArn, state, input, output);
        return output;
      },
    ]),
  );
}

function applyFault(actions: FaultActions, record: ExecutionRecord, fault: TaskFault, cause: string): void {
  if (fault === "lost") actions.lose(record);
  else actions.fail(record, { status: "FAILED", error: STATES_RUNTIME, cause });
}

/**
 * Asks the fault hook as each Task is entered; a faulted execution ends (or
 * vanishes) instead of invoking it. A Task whose execution died while its
 * function ran (FaultPlan's `execution` edge effect) never settles either: in
 * AWS the function's late answer reaches no one.
 */
function withTaskFaults(overrides: Record<string, TaskOverride>, record: ExecutionRecord, hook: TaskFaultHook | undefined, actions: FaultActions): Record<string, TaskOverride> {
  if (!hook) return overrides;
  return Object.fromEntries(
    Object.entries(overrides).map(([state, invoke]) => [
      state,
      async (input: JsonValue) => {
        const fault = hook({ executionArn: record.executionArn, name: record.name, state });
        if (fault) applyFault(actions, record, fault, `fault injected: the service failed the execution entering ${state}`);
        // Never settles: the engine's abort does not interrupt a Task in flight, and a failed Task would
        // go on through its Retry/Catch as if the execution still ran.
        if (fault) return NEVER();
        const output = await invoke(input).catch((error: unknown) => {
          if (record.status !== "RUNNING") return NEVER();
          throw error;
        });
        return record.status === "RUNNING" ? output : NEVER();
      },
    ]),
  );
}

const NEVER = () => new Promise<JsonValue>(() => undefined);

function settleWithin(work: Promise<void> | undefined, ms: number): Promise<void> {
  if (!work) return Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  const grace = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  return Promise.race([work, grace]).finally(() => clearTimeout(timer));
}

/** The Context Object (`$$`): what Step Functions provides that we can know. */
function contextObject(record: ExecutionRecord, machine: RegisteredMachine, scope: ArnScope) {
  return {
    Execution: {
      Id: record.executionArn,
      Name: record.name,
      RoleArn: `arn:aws:iam::${scope.accountId}:role/local-step-functions`,
      StartTime: record.startDate.toISOString(),
      RedriveCount: 0,
    },
    StateMachine: { Id: machine.arn, Name: machine.name },
    // `.waitForTaskToken` tasks swap in their own token (./task-tokens.ts).
    Task: { Token: TASK_TOKEN_PLACEHOLDER },
  };
}

/**
 * The library queues events until they are read, so we always drain the log
 * (an unread log would grow for the whole execution). A failing listener must
 * not stop the draining.
 */
function consumeEvents(
  events: AsyncGenerator<EngineEvent>,
  onEvent: (event: EngineEvent) => void,
  logger: LocalLogger | undefined,
): Promise<void> {
  const drain = async (): Promise<void> => {
    for await (const event of events) {
      try {
        onEvent(event);
      } catch (error) {
        logger?.error("local step functions: execution event listener failed", { error: String(error) });
      }
    }
  };
  return drain().catch((error: unknown) => {
    logger?.error("local step functions: event log failed", { error: String(error) });
  });
}

/**
 * Task results are checked where they are produced (tasks.ts); this catches
 * the other states (Pass, Parallel, ResultPath merges). The event arrives
 * after the library moved on, so the next state may already have started:
 * the execution still ends FAILED with States.DataLimitExceeded.
 */
function oversizedStateOutput(event: EngineEvent): string | undefined {
  if (event.type !== "StateExited") return undefined;
  return exceedsStateLimit(event.state.output) ? dataLimitCause(event.state.name) : undefined;
}

function successOutcome(output: unknown): ExecutionOutcome {
  if (exceedsStateLimit(output)) {
    return {
      status: "FAILED",
      error: STATES_DATA_LIMIT_EXCEEDED,
      cause: "The execution output has a size exceeding the maximum number of bytes service limit.",
    };
  }
  return { status: "SUCCEEDED", output: JSON.stringify(output ?? null) };
}

function failureOutcome(error: unknown, failure: StopDetail | undefined): ExecutionOutcome {
  if (failure) return { status: "FAILED", ...failure };
  if (error instanceof ExecutionTimeoutError) return { status: "TIMED_OUT", error: STATES_TIMEOUT };
  if (error instanceof ExecutionAbortedError) return { status: "ABORTED" };
  if (error instanceof ExecutionError && error.cause instanceof Error) {
    return { status: "FAILED", error: error.cause.name, cause: error.cause.message };
  }
  return { status: "FAILED", error: STATES_RUNTIME, cause: error instanceof Error ? error.message : String(error) };
}
