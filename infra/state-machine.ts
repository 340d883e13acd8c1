/**
 * The outer run loop as a Step Functions Standard state machine. The ASL only
 * moves ids and switches on the decision the Lambdas return; all policy lives
 * in `shared/core`. JSONPath only: the local executor gets JSONata wrong.
 *
 *   Attempt -> Route --finished--> Done (the Attempt task finalized the run)
 *      |        |----attempt|compact|truncate--> Attempt
 *      |        |----wait-----> WaitBeforeRetry -> Attempt
 *      |        |----continue_as_new--> Continued (a fresh execution goes on)
 *      | crash  '----finalize/other--> FinalizeRun -> Done
 *      v                                  | (retries exhausted)
 *   RecoverAttempt -> Route               '-> FinalizeFailed
 *
 * The run's first and last steps are folded into the Attempt tasks around
 * them (shared/run/folded-step.ts): the first Attempt gets the execution's
 * input `{runId}` and starts the run before its model call; an Attempt whose
 * decision is `finalize` finalizes the run itself and answers `finished`, so
 * Route goes straight to Done. FinalizeRun stays for every other ending: a
 * finalize the Attempt could not do (it threw, or too little time was left),
 * a crash the recovery ended, a malformed decision.
 *
 * A tool call that waits for a human (approval) or a client (client tool)
 * routes `pause` to PauseForInput: a `.waitForTaskToken` task (no Lambda
 * runs while it waits) whose function parks the token on the input's record;
 * the resolver's SendTaskSuccess, or TimeoutSeconds (States.Timeout, caught),
 * goes on to Attempt, which finishes the call (docs/approvals.md).
 *
 * Compaction and truncation run inside the next Attempt task, before its
 * model call: no extra state, no extra transition, and the compaction is
 * sized for the model that attempt runs. A clean run is 3 transitions
 * (Attempt, Route, Done).
 */
import { Duration } from "aws-cdk-lib";
import type { IFunction } from "aws-cdk-lib/aws-lambda";
import type { ILogGroup } from "aws-cdk-lib/aws-logs";
import {
  Choice,
  Condition,
  DefinitionBody,
  Fail,
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
import type { Construct } from "constructs";

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

export interface RunStateMachineProps {
  readonly functions: Readonly<Record<TaskFunctionKey, IFunction>>;
  readonly stateMachineName: string;
  readonly logGroup: ILogGroup;
  readonly tracing: boolean;
  /** Execution logging (default ERROR; ALL includes every state transition, without execution data). */
  readonly logLevel?: LogLevel;
}

export function createRunStateMachine(scope: Construct, id: string, props: RunStateMachineProps): StateMachine {
  return new StateMachine(scope, id, {
    stateMachineName: props.stateMachineName,
    stateMachineType: StateMachineType.STANDARD,
    definitionBody: DefinitionBody.fromChainable(buildRunLoop(scope, props.functions)),
    timeout: Duration.seconds(STATE_MACHINE_TIMEOUT_SECONDS),
    // ERROR only: execution data would copy run ids and crash causes into logs on every step.
    logs: { destination: props.logGroup, level: props.logLevel ?? LogLevel.ERROR, includeExecutionData: false },
    tracingEnabled: props.tracing,
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

function buildRunLoop(scope: Construct, fns: RunStateMachineProps["functions"]): LambdaInvoke {
  const crashCatch = { errors: [ALL_ERRORS], resultPath: STATE_PATHS.crash };
  const transient = retryOf(LAMBDA_TRANSIENT_ERRORS, LAMBDA_RETRY);

  // Whole state in: it only ever holds ids, counters and the last decision. The first one gets the
  // execution's input: `{runId}` from StartExecution, or `{runId, loop}` when a long run continues as new.
  const attempt = lambdaTask(scope, STATE_NAMES.attempt, fns.attempt);
  const recover = lambdaTask(scope, STATE_NAMES.recoverAttempt, fns.decide);
  const finalize = lambdaTask(scope, STATE_NAMES.finalizeRun, fns["run-finalize"]);
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
  finalize
    .addRetry(retryOf([ALL_ERRORS], FINALIZE_RETRY))
    .addCatch(Fail.jsonPath(scope, STATE_NAMES.finalizeFailed, {
      error: FINALIZE_FAILED_ERROR,
      cause: "run-finalize kept failing; the sweeper frees the session lane",
    }))
    .next(done);
  return attempt;
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
