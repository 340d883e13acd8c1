/**
 * Operations wiring of the construct: every alarm notifies one SNS topic
 * (the one given as a prop, or one created here), an alarm on failed runs
 * from the runner's own metric, and the dashboard (infra/dashboard.ts).
 */
import { Duration } from "aws-cdk-lib";
import { ComparisonOperator, TreatMissingData, type Alarm, type Dashboard } from "aws-cdk-lib/aws-cloudwatch";
import { SnsAction } from "aws-cdk-lib/aws-cloudwatch-actions";
import { Topic, type ITopic } from "aws-cdk-lib/aws-sns";
import type { Construct } from "constructs";
import { DIMENSION, METRIC } from "../shared/observability/names";
import { createDashboard, runnerMetric, type DashboardTargets } from "./dashboard";

/** Failed runs (status error) in 5 minutes that page someone: one is noise, a handful is an incident. */
export const RUN_ERRORS_ALARM_THRESHOLD = 5;

export interface ObservabilityProps extends DashboardTargets {
  readonly alarms: readonly Alarm[];
  readonly alarmTopic?: ITopic;
}

export interface Observability {
  readonly alarmTopic: ITopic;
  readonly alarms: readonly Alarm[];
  readonly dashboard: Dashboard;
}

export function createObservability(scope: Construct, props: ObservabilityProps): Observability {
  const alarmTopic = props.alarmTopic ?? new Topic(scope, "AlarmTopic", { displayName: "agent-runner alarms", enforceSSL: true });
  const runErrors = runnerMetric(METRIC.runsEnded, "Sum", { [DIMENSION.outcome]: "error" }).createAlarm(scope, "RunErrorsAlarm", {
    threshold: RUN_ERRORS_ALARM_THRESHOLD,
    evaluationPeriods: 1,
    comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    treatMissingData: TreatMissingData.NOT_BREACHING,
    alarmDescription: `At least ${RUN_ERRORS_ALARM_THRESHOLD} runs ended with status error within ${Duration.minutes(5).toHumanString()}.`,
  });
  const alarms = [...props.alarms, runErrors];
  const action = new SnsAction(alarmTopic);
  for (const alarm of alarms) {
    alarm.addAlarmAction(action);
    alarm.addOkAction(action);
  }
  const dashboard = createDashboard(scope, "Dashboard", props);
  return { alarmTopic, alarms, dashboard };
}
