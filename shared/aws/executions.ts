import type { SFNClient } from "@aws-sdk/client-sfn";
import type { LazyClient } from "./clients";
import { executionMachine } from "../core/execution-names";

// The SDK package loads with the client (./clients.ts): never at the function's import.
const sdk = () => import("@aws-sdk/client-sfn");

export type ExecutionStatus = "RUNNING" | "SUCCEEDED" | "FAILED" | "TIMED_OUT" | "ABORTED" | "PENDING_REDRIVE";

export interface ExecutionState {
  status: ExecutionStatus;
  error?: string;
  cause?: string;
}

export interface RunExecutions {
  /** Starts the run machine for a run; a duplicate start is harmless (execution name = run id). */
  start(runId: string): Promise<{ executionArn?: string; alreadyStarted: boolean }>;
  /**
   * An execution by name or ARN; undefined when there is none. A name is
   * looked up in the machine it belongs to (executionMachine). Optional: only
   * the sweeper needs it.
   */
  describe?(nameOrArn: string): Promise<ExecutionState | undefined>;
  /**
   * Starts a fresh execution for a run that is still going, in the machine its
   * name belongs to: `<runId>-c<generation>` (continue-as-new) and
   * `<execution>-l` (a hand-off) in the loop machine, `<runId>-r<n>` (a
   * re-drive) in the run machine. Names are deterministic, so a repeated
   * start is harmless. Optional: only the tasks and the sweeper need it.
   */
  continueRun?(name: string, input: Record<string, unknown>): Promise<{ executionArn?: string; alreadyStarted: boolean }>;
  /** The ARN an execution of that name has (or will have), known without a call. */
  executionArn?(name: string): string;
  /**
   * Wakes a run waiting in a `.waitForTaskToken` task (SendTaskSuccess).
   * False when the task no longer waits (it timed out, or was answered): the
   * answer is in the record either way. Optional: only the resolvers and the pause task need it.
   */
  answerTask?(taskToken: string, output: Record<string, unknown>): Promise<boolean>;
  /**
   * The ARN a run's first execution has (it is named by the run id), known
   * without a call. Where this exists, the dispatcher does not write it to the
   * run record: the run start does, in the write that marks the run running.
   */
  firstExecutionArn?(runId: string): string;
}

/** The run machine every run starts in, and the loop machine it may go on in (infra/state-machine.ts). */
export interface RunMachineArns {
  run: string;
  loop?: string;
}

/** SendTaskSuccess errors that mean "nobody waits for this token any more". */
const TASK_GONE = new Set(["TaskTimedOut", "TaskDoesNotExist", "InvalidToken"]);

/** `...:stateMachine:<machine>` -> `...:execution:<machine>:<name>` (a run's first execution is named by its run id). */
export function executionArnOf(stateMachineArn: string, name: string): string {
  return `${stateMachineArn.replace(":stateMachine:", ":execution:")}:${name}`;
}

export function createRunExecutions(lazySfn: LazyClient<SFNClient>, machines: RunMachineArns): RunExecutions {
  const machineOf = (name: string): string => {
    const arn = machines[executionMachine(name)];
    if (!arn) throw new Error(`execution ${name} runs in the loop machine: LOOP_STATE_MACHINE_ARN is not set for this function`);
    return arn;
  };
  const startNamed = async (name: string, input: Record<string, unknown>) => {
    const stateMachineArn = machineOf(name);
    const [sfn, { StartExecutionCommand }] = await Promise.all([lazySfn(), sdk()]);
    try {
      const out = await sfn.send(new StartExecutionCommand({ stateMachineArn, name, input: JSON.stringify(input) }));
      return { executionArn: out.executionArn, alreadyStarted: false };
    } catch (error) {
      if ((error as { name?: string }).name === "ExecutionAlreadyExists") return { alreadyStarted: true };
      throw error;
    }
  };
  return {
    start: (runId) => startNamed(runId, { runId }),
    async answerTask(taskToken, output) {
      const [sfn, { SendTaskSuccessCommand }] = await Promise.all([lazySfn(), sdk()]);
      try {
        await sfn.send(new SendTaskSuccessCommand({ taskToken, output: JSON.stringify(output) }));
        return true;
      } catch (error) {
        if (TASK_GONE.has((error as { name?: string }).name ?? "")) return false;
        throw error;
      }
    },
    continueRun: (name, input) => startNamed(name, input),
    executionArn: (name) => executionArnOf(machineOf(name), name),
    firstExecutionArn: (runId) => executionArnOf(machines.run, runId),
    async describe(nameOrArn) {
      const executionArn = nameOrArn.startsWith("arn:") ? nameOrArn : executionArnOf(machineOf(nameOrArn), nameOrArn);
      const [sfn, { DescribeExecutionCommand }] = await Promise.all([lazySfn(), sdk()]);
      try {
        const out = await sfn.send(new DescribeExecutionCommand({ executionArn }));
        return { status: out.status as ExecutionStatus, ...(out.error ? { error: out.error } : {}), ...(out.cause ? { cause: out.cause } : {}) };
      } catch (error) {
        if ((error as { name?: string }).name === "ExecutionDoesNotExist") return undefined;
        throw error;
      }
    },
  };
}
