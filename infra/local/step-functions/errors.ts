/**
 * Two families of errors live here:
 * - API errors, answered over HTTP as `{"__type": code, "message"}` with
 *   status 400, so the real SFN client raises its modeled exception
 *   (`ExecutionAlreadyExists`, ...);
 * - state errors, thrown inside an execution. aws-local-stepfunctions matches
 *   `Retry`/`Catch` `ErrorEquals` against `error.name` and hands a catcher
 *   `{ Error: error.name, Cause: error.message }`, so the name is the ASL
 *   error name and the message is the Cause string. Never set `cause` on
 *   them: the library would then log the object instead of the string.
 */

export type SfnApiErrorCode =
  | "ExecutionAlreadyExists"
  | "ExecutionDoesNotExist"
  | "StateMachineDoesNotExist"
  | "InvalidName"
  | "InvalidArn"
  | "InvalidExecutionInput"
  | "ValidationException"
  | "UnknownOperationException"
  | "SerializationException"
  | "InvalidToken"
  | "TaskDoesNotExist"
  | "TaskTimedOut"
  | "InvalidOutput";

export class SfnApiError extends Error {
  readonly code: SfnApiErrorCode;

  constructor(code: SfnApiErrorCode, message: string) {
    super(message);
    this.name = code;
    this.code = code;
  }
}

export const STATES_DATA_LIMIT_EXCEEDED = "States.DataLimitExceeded";
export const STATES_TASK_FAILED = "States.TaskFailed";
export const STATES_RUNTIME = "States.Runtime";
export const STATES_TIMEOUT = "States.Timeout";
/** A `.waitForTaskToken` task whose HeartbeatSeconds passed without SendTaskHeartbeat. */
export const STATES_HEARTBEAT_TIMEOUT = "States.HeartbeatTimeout";

/** A Task failure as Step Functions names it (`Error`) and explains it (`Cause`). */
export class StatesTaskError extends Error {
  constructor(errorName: string, cause: string) {
    super(cause);
    this.name = errorName;
  }
}

/**
 * AWS: "a terminal error that can't be caught by the States.ALL error type".
 * The library consults `isRetryable` / `isCatchable` before matching any
 * `ErrorEquals`, so this error is neither retried nor caught, even by a
 * catcher naming it explicitly (stricter than AWS's wording, which only rules
 * out `States.ALL`; do not build an ASL on catching it).
 */
export class StatesDataLimitExceededError extends Error {
  constructor(cause: string) {
    super(cause);
    this.name = STATES_DATA_LIMIT_EXCEEDED;
  }

  get isRetryable(): boolean {
    return false;
  }

  get isCatchable(): boolean {
    return false;
  }
}
