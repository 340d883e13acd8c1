/**
 * The outer run loop as two Step Functions Standard state machines. The ASL
 * only moves ids and switches on the decision the Lambdas return; all policy
 * lives in `shared/core`. JSONPath only: the local executor gets JSONata wrong.
 *
 * The run machine (every run starts here; StartExecution named by the run id):
 *
 *   Attempt --finished or handed off--> (end)
 *      | crash
 *      v
 *   RecoverAttempt --handed off--> (end)
 *      | crash
 *      v
 *   FinalizeRun --> (end)   '-(retries exhausted)-> FinalizeFailed
 *
 * A clean run is this machine's one state: Attempt starts the run, runs the
 * attempt and finalizes it (shared/run/folded-step.ts), and the execution ends
 * there. One transition, where a Choice on the Attempt's answer would cost two
 * more (Route, then Done) on every run. An Attempt whose decision needs the
 * loop (a retry, a wait, a pause, a compaction, a FinalizeRun) hands the run
 * to the loop machine itself (shared/run/hand-off.ts: it starts an execution
 * named `<execution>-l`, then names it on the run record) and ends; so does
 * RecoverAttempt. The tasks get the execution's name (`$$.Execution.Name`) as
 * `entry`: that is how they know to hand off, and what they name the loop's
 * execution after.
 *
 * The loop machine (started by a hand-off at Route, or by continue-as-new):
 *
 *   Route --finished--> Done (the Attempt task finalized the run)
 *    ^ |----attempt|compact|truncate--> Attempt --> Route
 *    | |----wait-----> WaitBeforeRetry -> Attempt
 *    | |----continue_as_new--> Continued (a fresh execution goes on)
 *    | |----pause----> PauseForInput -> Attempt
 *    | '----finalize/other--> FinalizeRun -> Done
 *    |                           '-(retries exhausted)-> FinalizeFailed
 *   RecoverAttempt <--crash-- Attempt / PauseForInput
 *
 * FinalizeRun stays for every ending the Attempt did not finish itself: a
 * finalize it could not do (it threw, or too little time was left), a crash
 * the recovery ended, a malformed decision.
 *
 * A tool call that waits for a human (approval) or a client (client tool)
 * routes `pause` to PauseForInput: a `.waitForTaskToken` task (no Lambda
 * runs while it waits) whose function parks the token on the input's record;
 * the resolver's SendTaskSuccess, or TimeoutSeconds (States.Timeout, caught),
 * goes on to Attempt, which finishes the call (docs/approvals.md).
 *
 * Compaction and truncation run inside the next Attempt task, before its
 * model call: no extra state, no extra transition, and the compaction is
 * sized for the model that attempt runs.
 */
import { Duration } from "aws-cdk-lib";
import type { IFunction } from "aws-cdk-lib/aws-lambda";
import type { ILogGroup } from "aws-cdk-lib/aws-logs";
import {
  Choice,
  Condition,
  DefinitionBody,
  Fail,
  type IChainable,
  IntegrationPattern,
  JsonPath,
  LogLevel,
  StateMachine,
  StateMachineType,
  Succeed,
  TaskInput,
  Timeout,
  Wait,
  WaitTime,
  type RetryProps,
} from "aws-cdk-lib/aws-stepfunctions";
import { LambdaInvoke } from "aws-cdk-lib/aws-stepfunctions-tasks";
import { Construct } from "constructs";

export const STATE_NAMES = {
  attempt: "Attempt",
  recoverAttempt: "RecoverAttempt",
  route: "Route",
  waitBeforeRetry: "WaitBeforeRetry",
  finalizeRun: "FinalizeRun",
  done: "Done",
  finalizeFailed: "FinalizeFailed",
  continued: "Continued",
  pauseForInput: "PauseForInput",
} as const;

/** Which function each Task state invokes. */
export const TASK_FUNCTIONS = {
  [STATE_NAMES.attempt]: "attempt",
  [STATE_NAMES.recoverAttempt]: "decide",
  [STATE_NAMES.finalizeRun]: "run-finalize",
  [STATE_NAMES.pauseForInput]: "decide",
} as const;

export type TaskFunctionKey = (typeof TASK_FUNCTIONS)[keyof typeof TASK_FUNCTIONS];

/** Invocation failures of the Lambda service itself: the handler never ran or its answer was lost. */
export const LAMBDA_TRANSIENT_ERRORS = [
  "Lambda.ServiceException",
  "Lambda.AWSLambdaException",
  "Lambda.SdkClientException",
  "Lambda.TooManyRequestsException",
] as const;

export const ALL_ERRORS = "States.ALL";
/** A pause's TimeoutSeconds passed with no answer: the next attempt gives the call its timeout result. */
export const PAUSE_TIMEOUT_ERROR = "States.Timeout";
/** Error of the terminal Fail state when the run could not even be finalized. */
export const FINALIZE_FAILED_ERROR = "FinalizeFailed";

/** Every name a Retry or Catch may match on; a test fails on any other. */
export const PINNED_ERROR_NAMES: readonly string[] = [...LAMBDA_TRANSIENT_ERRORS, ALL_ERRORS, PAUSE_TIMEOUT_ERROR];

/** `decision.action` values the Route state switches on. */
export const ROUTE_ACTIONS = {
  attempt: "attempt",
  /** Both run in the next Attempt task, before its model call. */
  compact: "compact",
  truncate: "truncate",
  wait: "wait",
  continueAsNew: "continue_as_new",
  pause: "pause",
  finalize: "finalize",
} as const;

export const STATE_PATHS = {
  runId: "$.runId",
  decisionAction: "$.decision.action",
  waitSeconds: "$.decision.waitSeconds",
  pauseInputId: "$.decision.inputId",
  pauseTimeoutSeconds: "$.decision.timeoutSeconds",
  /** What SendTaskSuccess answered (ignored: the record holds the answer), or the caught timeout. */
  resumed: "$.resumed",
  /** Where a caught error lands: `{Error, Cause}`. */
  crash: "$.crash",
  /** Set by an Attempt that finalized the run itself: `{status}`. */
  finished: "$.finished",
} as const;

export const LAMBDA_RETRY = { intervalSeconds: 2, maxAttempts: 3, backoffRate: 2 } as const;
export const FINALIZE_RETRY = { intervalSeconds: 1, maxAttempts: 5, backoffRate: 2 } as const;

/** Run budget (48 h, the agent run default) plus an hour for finalization. */
export const RUN_BUDGET_SECONDS = 48 * 3600;
export const STATE_MACHINE_TIMEOUT_SECONDS = RUN_BUDGET_SECONDS + 3600;

/** The run machine's states (a subset of STATE_NAMES: every run starts here). */
export const RUN_MACHINE_STATES = [STATE_NAMES.attempt, STATE_NAMES.recoverAttempt, STATE_NAMES.finalizeRun, STATE_NAMES.finalizeFailed] as const;

/** Where the run machine's tasks find their execution's name (what they hand off under). */
export const ENTRY_PATH = "$$.Execution.Name";

interface MachineSettings {
  readonly logGroup: ILogGroup;
  readonly tracing: boolean;
  /** Execution logging (default ERROR; ALL includes every state transition, without execution data). */
  readonly logLevel?: LogLevel;
}

export interface RunStateMachinesProps extends MachineSettings {
  readonly functions: Readonly<Record<TaskFunctionKey, IFunction>>;
  /** Fixed names: functions know both ARNs without a Ref (infra/lambdas.ts). */
  readonly runMachineName: string;
  readonly loopMachineName: string;
  readonly loopLogGroup: ILogGroup;
}

export interface RunStateMachines {
  /** Every run starts here (the dispatcher's StartExecution, the sweeper's re-drives). */
  readonly run: StateMachine;
  /** Where a run goes on when its first attempt did not finish it (hand-off, continue-as-new). */
  readonly loop: StateMachine;
}

export function createRunStateMachines(scope: Construct, props: RunStateMachinesProps): RunStateMachines {
  const loop = machine(scope, "LoopStateMachine", props.loopMachineName, buildRunLoop(scope, props.functions), { ...props, logGroup: props.loopLogGroup });
  // Its own construct scope: its states reuse the loop's names.
  const entry = buildRunEntry(new Construct(scope, "RunEntry"), props.functions);
  const run = machine(scope, "RunStateMachine", props.runMachineName, entry, props);
  return { run, loop };
}

function machine(scope: Construct, id: string, name: string, start: IChainable, settings: MachineSettings): StateMachine {
  return new StateMachine(scope, id, {
    stateMachineName: name,
    stateMachineType: StateMachineType.STANDARD,
    definitionBody: DefinitionBody.fromChainable(start),
    timeout: Duration.seconds(STATE_MACHINE_TIMEOUT_SECONDS),
    // ERROR only: execution data would copy run ids and crash causes into logs on every step.
    logs: { destination: settings.logGroup, level: settings.logLevel ?? LogLevel.ERROR, includeExecutionData: false },
    tracingEnabled: settings.tracing,
  });
}

function retryOf(errors: readonly string[], retry: typeof LAMBDA_RETRY | typeof FINALIZE_RETRY): RetryProps {
  return {
    errors: [...errors],
    interval: Duration.seconds(retry.intervalSeconds),
    maxAttempts: retry.maxAttempts,
    backoffRate: retry.backoffRate,
  };
}

/** A Lambda task whose `Resource` is the function ARN and whose result replaces the state. */
function lambdaTask(scope: Construct, name: string, fn: IFunction, payload?: TaskInput): LambdaInvoke {
  return LambdaInvoke.jsonPath(scope, name, {
    lambdaFunction: fn,
    payload,
    payloadResponseOnly: true,
    // Our own Retry below, so every matched error name is pinned.
    retryOnServiceExceptions: false,
  });
}

/**
 * The run machine: Attempt, and on a crash RecoverAttempt, each ending the
 * execution (the run finished, or went on in the loop machine); FinalizeRun
 * when even the recovery failed. The tasks get the run id and `entry`.
 */
function buildRunEntry(scope: Construct, fns: RunStateMachinesProps["functions"]): LambdaInvoke {
  const crashCatch = { errors: [ALL_ERRORS], resultPath: STATE_PATHS.crash };
  const transient = retryOf(LAMBDA_TRANSIENT_ERRORS, LAMBDA_RETRY);
  const entry = JsonPath.stringAt(ENTRY_PATH);
  const runId = JsonPath.stringAt(STATE_PATHS.runId);
  const attempt = lambdaTask(scope, STATE_NAMES.attempt, fns.attempt, TaskInput.fromObject({ runId, entry }));
  const recover = lambdaTask(scope, STATE_NAMES.recoverAttempt, fns.decide, TaskInput.fromObject({ runId, entry, crash: JsonPath.objectAt(STATE_PATHS.crash) }));
  const finalize = finalizeTask(scope, fns["run-finalize"]);
  attempt.addRetry(transient).addCatch(recover, crashCatch);
  recover.addRetry(transient).addCatch(finalize, crashCatch);
  return attempt;
}

function finalizeTask(scope: Construct, fn: IFunction): LambdaInvoke {
  const finalize = lambdaTask(scope, STATE_NAMES.finalizeRun, fn);
  finalize
    .addRetry(retryOf([ALL_ERRORS], FINALIZE_RETRY))
    .addCatch(Fail.jsonPath(scope, STATE_NAMES.finalizeFailed, {
      error: FINALIZE_FAILED_ERROR,
      cause: "run-finalize kept failing; the sweeper frees the session lane",
    }));
  return finalize;
}

/** The loop machine, from Route: a hand-off's or a continuation's input is `{runId, loop, decision}`. */
function buildRunLoop(scope: Construct, fns: RunStateMachinesProps["functions"]): Choice {
  const crashCatch = { errors: [ALL_ERRORS], resultPath: STATE_PATHS.crash };
  const transient = retryOf(LAMBDA_TRANSIENT_ERRORS, LAMBDA_RETRY);

  // Whole state in: it only ever holds ids, counters and the last decision.
  const attempt = lambdaTask(scope, STATE_NAMES.attempt, fns.attempt);
  const recover = lambdaTask(scope, STATE_NAMES.recoverAttempt, fns.decide);
  const finalize = finalizeTask(scope, fns["run-finalize"]);
  const pause = pauseTask(scope, fns.decide);
  const done = Succeed.jsonPath(scope, STATE_NAMES.done);
  const route = buildRoute(scope, { attempt, finalize, pause, done });

  pause
    .addRetry(transient)
    .addCatch(attempt, { errors: [PAUSE_TIMEOUT_ERROR], resultPath: STATE_PATHS.resumed })
    .addCatch(recover, crashCatch)
    .next(attempt);
  attempt.addRetry(transient).addCatch(recover, crashCatch).next(route);
  // A crash while deciding still ends the run: finalize sees `crash` and no decision.
  recover.addRetry(transient).addCatch(finalize, crashCatch).next(route);
  finalize.next(done);
  return route;
}

/**
 * Waits with no code running: the function gets only pointers and the token,
 * the state keeps its pointers (the answer lands at `$.resumed`, unused).
 */
function pauseTask(scope: Construct, fn: IFunction): LambdaInvoke {
  return LambdaInvoke.jsonPath(scope, STATE_NAMES.pauseForInput, {
    lambdaFunction: fn,
    integrationPattern: IntegrationPattern.WAIT_FOR_TASK_TOKEN,
    payload: TaskInput.fromObject({
      action: "pause_for_input",
      runId: JsonPath.stringAt(STATE_PATHS.runId),
      inputId: JsonPath.stringAt(STATE_PATHS.pauseInputId),
      taskToken: JsonPath.taskToken,
    }),
    taskTimeout: Timeout.at(STATE_PATHS.pauseTimeoutSeconds),
    resultPath: STATE_PATHS.resumed,
    retryOnServiceExceptions: false,
  });
}

interface RouteTargets {
  attempt: LambdaInvoke;
  finalize: LambdaInvoke;
  pause: LambdaInvoke;
  done: Succeed;
}

function buildRoute(scope: Construct, { attempt, finalize, pause, done }: RouteTargets): Choice {
  const waitBeforeRetry = Wait.jsonPath(scope, STATE_NAMES.waitBeforeRetry, {
    time: WaitTime.secondsPath(STATE_PATHS.waitSeconds),
  }).next(attempt);
  const { decisionAction, waitSeconds } = STATE_PATHS;
  const continued = Succeed.jsonPath(scope, STATE_NAMES.continued, { comment: "The run goes on in the execution named <runId>-c<generation>." });
  // A Choice rule on a missing path is a States.Runtime error that nothing can
  // catch, so a malformed decision is routed to FinalizeRun explicitly.
  return Choice.jsonPath(scope, STATE_NAMES.route)
    // First: an Attempt that finalized the run itself leaves nothing to do (no FinalizeRun transition).
    .when(Condition.isPresent(STATE_PATHS.finished), done)
    .when(Condition.isNotPresent(decisionAction), finalize)
    .when(
      Condition.or(
        Condition.stringEquals(decisionAction, ROUTE_ACTIONS.attempt),
        Condition.stringEquals(decisionAction, ROUTE_ACTIONS.compact),
        Condition.stringEquals(decisionAction, ROUTE_ACTIONS.truncate),
      ),
      attempt,
    )
    .when(
      Condition.and(Condition.stringEquals(decisionAction, ROUTE_ACTIONS.wait), Condition.isNumeric(waitSeconds)),
      waitBeforeRetry,
    )
    .when(Condition.stringEquals(decisionAction, ROUTE_ACTIONS.continueAsNew), continued)
    .when(Condition.stringEquals(decisionAction, ROUTE_ACTIONS.pause), pause)
    .when(Condition.stringEquals(decisionAction, ROUTE_ACTIONS.finalize), finalize)
    .otherwise(finalize);
}
