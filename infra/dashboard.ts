/**
 * One CloudWatch dashboard with the figures an operator looks at first: the
 * runner's EMF metrics (shared/observability/names.ts) next to the AWS
 * metrics of the queue, the state machine and the functions.
 */
import { Duration } from "aws-cdk-lib";
import {
  Dashboard,
  GraphWidget,
  MathExpression,
  Metric,
  TextWidget,
  type IMetric,
} from "aws-cdk-lib/aws-cloudwatch";
import type { IFunction } from "aws-cdk-lib/aws-lambda";
import type { IQueue } from "aws-cdk-lib/aws-sqs";
import type { StateMachine } from "aws-cdk-lib/aws-stepfunctions";
import type { Construct } from "constructs";
import { DIMENSION, METRIC, METRICS_NAMESPACE, type MetricName } from "../shared/observability/names";
import { SERVICE_NAME } from "./functions";

const PERIOD = Duration.minutes(5);
export const RUN_OUTCOMES = ["ok", "error", "timeout", "aborted"] as const;

/** A runner metric as Powertools emits it: namespace, `service` dimension (+ the given ones). */
export function runnerMetric(name: MetricName, statistic = "Sum", dimensions: Record<string, string> = {}): Metric {
  return new Metric({ namespace: METRICS_NAMESPACE, metricName: name, statistic, period: PERIOD, dimensionsMap: { service: SERVICE_NAME, ...dimensions } });
}

/** Every dimension value of a metric (failure kinds are open-ended in the graph, closed in the code). */
function searchOf(name: MetricName, dimensions: readonly string[], label: string): MathExpression {
  const schema = [METRICS_NAMESPACE, "service", ...dimensions].join(",");
  return new MathExpression({ expression: `SEARCH('{${schema}} MetricName="${name}"', 'Sum', ${PERIOD.toSeconds()})`, label, period: PERIOD });
}

export interface DashboardTargets {
  readonly queue: IQueue;
  readonly deadLetterQueue: IQueue;
  /** The run machine, then the loop machine (infra/state-machine.ts). */
  readonly stateMachines: readonly StateMachine[];
  readonly functions: Readonly<Record<string, IFunction>>;
}

function executionMetrics(machine: StateMachine, name: string): IMetric[] {
  return [
    machine.metricStarted({ period: PERIOD, label: `${name} started` }),
    machine.metricSucceeded({ period: PERIOD, label: `${name} succeeded` }),
    machine.metricFailed({ period: PERIOD, label: `${name} failed` }),
    machine.metricTimedOut({ period: PERIOD, label: `${name} timed out` }),
  ];
}

function graph(title: string, left: IMetric[], width = 12): GraphWidget {
  return new GraphWidget({ title, left, width, height: 6 });
}

export function createDashboard(scope: Construct, id: string, targets: DashboardTargets): Dashboard {
  const dashboard = new Dashboard(scope, id, { defaultInterval: Duration.hours(3) });
  const latency = (name: MetricName) => ["p50", "p90", "p99"].map((stat) => runnerMetric(name, stat).with({ label: `${name} ${stat}` }));
  dashboard.addWidgets(
    new TextWidget({ markdown: "# Agent runner\nRuns, the outer loop, spend and latency (EMF from the functions), then queues, executions and functions.", width: 24, height: 2 }),
  );
  dashboard.addWidgets(
    graph("Runs by outcome", RUN_OUTCOMES.map((outcome) => runnerMetric(METRIC.runsEnded, "Sum", { [DIMENSION.outcome]: outcome }).with({ label: outcome }))),
    graph("Attempts by outcome and failure kind", [searchOf(METRIC.attempts, [DIMENSION.outcome], "by outcome"), searchOf(METRIC.attempts, [DIMENSION.outcome, DIMENSION.failureKind], "by failure kind")]),
  );
  dashboard.addWidgets(
    graph("Loop decisions: retries, rotations, fallbacks, compactions", [METRIC.retries, METRIC.rotations, METRIC.fallbacks, METRIC.compactions, METRIC.truncations, METRIC.waits].map((name) => runnerMetric(name).with({ label: name }))),
    graph("Tokens and cost", [runnerMetric(METRIC.inputTokens), runnerMetric(METRIC.outputTokens), runnerMetric(METRIC.costUsd).with({ label: "CostUsd" })]),
  );
  dashboard.addWidgets(
    graph("Lane wait (ms)", latency(METRIC.laneWaitMs), 8),
    graph("Time to first token (ms)", latency(METRIC.timeToFirstTokenMs), 8),
    graph("Webhook ack latency (ms)", [searchOf(METRIC.webhookAckMs, [DIMENSION.channel], "by channel")], 8),
  );
  dashboard.addWidgets(
    graph("Run queue and DLQ", [
      targets.queue.metricApproximateNumberOfMessagesVisible({ period: PERIOD, label: "queue visible" }),
      targets.queue.metricApproximateAgeOfOldestMessage({ period: PERIOD, label: "oldest message age (s)" }),
      targets.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period: PERIOD, label: "DLQ visible" }),
    ], 8),
    graph("Executions", targets.stateMachines.flatMap((machine, index) => executionMetrics(machine, index === 0 ? "run" : "loop")), 8),
    graph("Run duration (ms)", latency(METRIC.runDurationMs), 8),
  );
  const fns = Object.entries(targets.functions);
  dashboard.addWidgets(
    graph("Function errors", fns.map(([key, fn]) => fn.metricErrors({ period: PERIOD, label: key }))),
    graph("Function duration p90 (ms)", fns.map(([key, fn]) => fn.metricDuration({ period: PERIOD, statistic: "p90", label: key }))),
  );
  return dashboard;
}
