import { StartExecutionCommand, type SFNClient } from "@aws-sdk/client-sfn";

export interface RunExecutions {
  /** Starts the state machine for a run; a duplicate start is harmless (execution name = run id). */
  start(runId: string): Promise<{ executionArn?: string; alreadyStarted: boolean }>;
}

export function createRunExecutions(sfn: SFNClient, stateMachineArn: string): RunExecutions {
  return {
    async start(runId) {
      try {
        const out = await sfn.send(
          new StartExecutionCommand({ stateMachineArn, name: runId, input: JSON.stringify({ runId }) }),
        );
        return { executionArn: out.executionArn, alreadyStarted: false };
      } catch (error) {
        if ((error as { name?: string }).name === "ExecutionAlreadyExists") return { alreadyStarted: true };
        throw error;
      }
    },
  };
}
