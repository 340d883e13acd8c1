/**
 * Alarms on the things that must never happen silently: a message parked in
 * the DLQ, a run execution that failed or timed out, any Lambda error. No
 * actions are attached; wire an SNS topic per account.
 */
import { Duration } from "aws-cdk-lib";
import {
  ComparisonOperator,
  TreatMissingData,
  type Alarm,
  type Metric,
} from "aws-cdk-lib/aws-cloudwatch";
import type { IFunction } from "aws-cdk-lib/aws-lambda";
import type { IQueue } from "aws-cdk-lib/aws-sqs";
import type { StateMachine } from "aws-cdk-lib/aws-stepfunctions";
import type { Construct } from "constructs";
import { constructIdOf } from "./lambdas";

const PERIOD = Duration.minutes(1);

function atLeastOnce(scope: Construct, id: string, metric: Metric, description: string): Alarm {
  return metric.createAlarm(scope, id, {
    threshold: 1,
    evaluationPeriods: 1,
    comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    treatMissingData: TreatMissingData.NOT_BREACHING,
    alarmDescription: description,
  });
}

export interface AlarmTargets {
  readonly deadLetterQueue: IQueue;
  /** The run machine, then the loop machine (infra/state-machine.ts). */
  readonly stateMachines: readonly StateMachine[];
  readonly functions: Readonly<Record<string, IFunction>>;
}

export function createAlarms(scope: Construct, targets: AlarmTargets): Alarm[] {
  const alarms: Alarm[] = [];
  alarms.push(atLeastOnce(
    scope,
    "DeadLetterQueueAlarm",
    targets.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period: PERIOD, statistic: "Maximum" }),
    "A run message was parked in the DLQ after 5 receives; it was never admitted.",
  ));
  targets.stateMachines.forEach((machine, index) => {
    // The run machine keeps the alarms' first ids (a stack that had one machine updates them in place).
    const prefix = index === 0 ? "" : "Loop";
    alarms.push(atLeastOnce(scope, `${prefix}ExecutionsFailedAlarm`, machine.metricFailed({ period: PERIOD }),
      "A run execution failed (FinalizeFailed or an uncaught error)."));
    alarms.push(atLeastOnce(scope, `${prefix}ExecutionsTimedOutAlarm`, machine.metricTimedOut({ period: PERIOD }),
      "A run execution hit the state machine timeout."));
  });
  for (const [key, fn] of Object.entries(targets.functions)) {
    alarms.push(atLeastOnce(scope, `${constructIdOf(key)}ErrorsAlarm`, fn.metricErrors({ period: PERIOD }),
      `The ${key} function reported an error.`));
  }
  return alarms;
}
