/**
 * A Step Functions Standard execution keeps at most 25,000 events in its
 * history; past that it fails. The state machine's shape is fixed
 * (infra/state-machine.ts), so the loop counts the events each path adds as
 * the run takes it, and continues in a fresh execution before the next
 * iteration could cross the limit, whatever mix of waits, crashes and
 * retries the run had. (An iteration count alone is blind to that mix.)
 *
 * Events per state, as the execution history records them:
 *  - Lambda task: TaskStateEntered, TaskScheduled, TaskStarted, TaskSucceeded, TaskStateExited (5);
 *    each failed try adds TaskScheduled, TaskStarted, TaskFailed (3);
 *  - Choice and Wait: StateEntered, StateExited (2 each);
 *  - the execution itself: ExecutionStarted, and at the end ExecutionSucceeded (1 each).
 */
export const HISTORY_EVENT_LIMIT = 25_000;

const TASK = 5;
const FAILED_TRY = 3;
const CHOICE = 2;
const WAIT = 2;
/** Tries of a task before its Catch (infra/state-machine.ts LAMBDA_RETRY.maxAttempts + 1; pinned by a test). */
export const TASK_TRIES = 4;
const FINALIZE_TRIES = 6;

/** ExecutionStarted and the StartRun task. */
export const START_EVENTS = 1 + TASK;
/** Attempt, Route and (counted always, an upper bound) the rate-limit Wait. */
export const ITERATION_EVENTS = TASK + CHOICE + WAIT;
/** What a crash adds on top of an iteration: the Attempt's failed tries and the RecoverAttempt task. */
export const CRASH_EVENTS = TASK_TRIES * FAILED_TRY + TASK;
/** The way out: FinalizeRun with every retry, Done, ExecutionSucceeded. */
export const FINALIZE_EVENTS = FINALIZE_TRIES * FAILED_TRY + TASK + 2 + 1;
/** The most one iteration can add: a crash with every retry of Attempt and of RecoverAttempt. */
export const MAX_ITERATION_EVENTS = ITERATION_EVENTS + CRASH_EVENTS + TASK_TRIES * FAILED_TRY;

/** True when one more iteration and the finalize path might not fit in this execution's history. */
export function historyNearlyFull(events: number, limit: number = HISTORY_EVENT_LIMIT): boolean {
  return events + MAX_ITERATION_EVENTS + FINALIZE_EVENTS > limit;
}
