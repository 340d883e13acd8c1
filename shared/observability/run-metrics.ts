import { MetricUnit } from "@aws-lambda-powertools/metrics";
import type { AttemptOutcome, Decision } from "../core/run-loop";
import { DIMENSION, METRIC, type MetricName } from "./names";
import { powertools } from "./powertools";

/**
 * The runner's business metrics as CloudWatch EMF lines (Powertools
 * Metrics). Recording only stores them; the handler middleware
 * (./middleware.ts) flushes once per invocation. Never throws: a metric must
 * not fail a run.
 */

type Unit = (typeof MetricUnit)[keyof typeof MetricUnit];

function safely(record: () => void): void {
  try {
    record();
  } catch {
    // Metrics are advisory (e.g. more than 100 distinct names in one flush).
  }
}

function count(name: MetricName, value = 1, unit: Unit = MetricUnit.Count): void {
  if (value > 0 || unit !== MetricUnit.Count) powertools().metrics.addMetric(name, unit, value);
}

/** A metric with its own dimensions goes out as its own EMF line at once. */
function dimensioned(name: MetricName, dimensions: Record<string, string>, value = 1, unit: Unit = MetricUnit.Count): void {
  const single = powertools().metrics.singleMetric();
  for (const [key, dimension] of Object.entries(dimensions)) single.addDimension(key, dimension);
  single.addMetric(name, unit, value);
}

/** Which repeat-work counter a decision feeds (its `reason` names the branch, shared/core/decide*). */
function decisionMetric(decision: Decision): MetricName | undefined {
  switch (decision.action) {
    case "wait":
      return METRIC.waits;
    case "compact":
      return METRIC.compactions;
    case "truncate":
      return METRIC.truncations;
    case "attempt": {
      const reason = decision.reason ?? "";
      // A yield or the attempt after a compaction goes on with the work; it does not repeat it.
      if (reason === "yield" || reason.startsWith("compaction")) return undefined;
      if (reason.includes("rotate")) return METRIC.rotations;
      if (reason.includes("fallback")) return METRIC.fallbacks;
      return METRIC.retries;
    }
    default:
      return undefined;
  }
}

export function recordAttemptMetrics(outcome: AttemptOutcome, decision: Decision): void {
  safely(() => {
    const dimensions: Record<string, string> = { [DIMENSION.outcome]: outcome.kind };
    if (outcome.kind === "failed") dimensions[DIMENSION.failureKind] = outcome.failure.kind;
    dimensioned(METRIC.attempts, dimensions);
    const repeat = decisionMetric(decision);
    if (repeat) count(repeat);
  });
}

export function recordModelUsage(usage: { input: number; output: number }, costUsd: number | undefined): void {
  safely(() => {
    count(METRIC.inputTokens, usage.input);
    count(METRIC.outputTokens, usage.output);
    if (costUsd !== undefined && costUsd > 0) count(METRIC.costUsd, costUsd, MetricUnit.NoUnit);
  });
}

export function recordRunEnded(status: string, durationMs: number | undefined): void {
  safely(() => {
    dimensioned(METRIC.runsEnded, { [DIMENSION.outcome]: status });
    if (durationMs !== undefined && durationMs >= 0) count(METRIC.runDurationMs, durationMs, MetricUnit.Milliseconds);
  });
}

export function recordLaneWait(waitMs: number): void {
  safely(() => count(METRIC.laneWaitMs, Math.max(0, waitMs), MetricUnit.Milliseconds));
}

export function recordTimeToFirstToken(ms: number): void {
  safely(() => count(METRIC.timeToFirstTokenMs, Math.max(0, ms), MetricUnit.Milliseconds));
}

/**
 * Hook for the channel webhooks (issue 13): call it with the time from the
 * webhook's arrival to its 2xx answer. The dashboard already has its widget.
 */
export function recordWebhookAck(channel: string, ms: number): void {
  safely(() => dimensioned(METRIC.webhookAckMs, { [DIMENSION.channel]: channel }, Math.max(0, ms), MetricUnit.Milliseconds));
}
