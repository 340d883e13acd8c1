/**
 * Names the functions emit and the dashboard and alarms read (infra/observability.ts).
 * Pure data, no imports: the CDK app imports it without pulling Powertools in.
 */
export const METRICS_NAMESPACE = "AgentRunner";

export const METRIC = {
  /** Count, dimension `outcome` (ok, error, timeout, aborted). */
  runsEnded: "RunsEnded",
  /** Count, dimension `outcome` (completed, failed, yielded, ...) and, for failures, `failureKind`. */
  attempts: "Attempts",
  /** Count per loop decision that repeats work: same-model retries, profile rotations, model fallbacks, compactions. */
  retries: "Retries",
  rotations: "Rotations",
  fallbacks: "Fallbacks",
  compactions: "Compactions",
  truncations: "Truncations",
  waits: "Waits",
  /** Count of tokens and USD of every model call of an attempt. */
  inputTokens: "InputTokens",
  outputTokens: "OutputTokens",
  costUsd: "CostUsd",
  /** Milliseconds between acceptance and the run's start (its session lane and the global lane). */
  laneWaitMs: "LaneWaitMs",
  /** Milliseconds from the model request to its first streamed text. */
  timeToFirstTokenMs: "TimeToFirstTokenMs",
  /** Milliseconds from a channel webhook's arrival to its 2xx answer (dimension `channel`). */
  webhookAckMs: "WebhookAckMs",
  /** Milliseconds of one whole run, accepted to ended. */
  runDurationMs: "RunDurationMs",
} as const;

export type MetricName = (typeof METRIC)[keyof typeof METRIC];

export const DIMENSION = { outcome: "outcome", failureKind: "failureKind", channel: "channel" } as const;

/** Name of the X-Ray subsegment around one model call; annotations `model`, `provider`, metadata `usage`. */
export const MODEL_CALL_SUBSEGMENT = "## model call";
