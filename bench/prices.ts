/**
 * The one price table the cost model uses: AWS list prices, US East
 * (N. Virginia), first pricing tier, no free tier, no Savings Plans.
 *
 * Read on 2026-11-29 from the pages below (stored copies in the research
 * index, not a live fetch): re-check them before quoting a figure.
 */
export const PRICES = {
  region: "us-east-1",
  readOn: "2026-11-29",
  lambda: {
    /** infra/lambdas.ts deploys every function on Graviton (Architecture.ARM_64). */
    architecture: "arm64",
    perGbSecond: 0.0000133334,
    perRequest: 0.2 / 1e6,
  },
  stepFunctions: {
    /** Standard workflows: per state transition, retries included. */
    perStateTransition: 0.025 / 1000,
  },
  dynamodb: {
    /** On-demand (the CDK table is PAY_PER_REQUEST). */
    perWriteRequestUnit: 0.625 / 1e6,
    perReadRequestUnit: 0.125 / 1e6,
  },
  sqs: {
    /** FIFO queue, per request (each 64 KB chunk of payload is one request). */
    perFifoRequest: 0.5 / 1e6,
  },
  apiGateway: {
    /** WebSocket: messages sent and received, metered in 32 KB increments. */
    perWebSocketMessage: 1.0 / 1e6,
    perConnectionMinute: 0.25 / 1e6,
    perRestRequest: 3.5 / 1e6,
  },
  cloudWatchLogs: {
    /** Standard log class, data ingested (Lambda logs and API Gateway access logs go there). */
    perGbIngested: 0.5,
  },
  xray: {
    /** Traces recorded (the template turns active tracing on by default: context `tracing`). */
    perTraceRecorded: 5.0 / 1e6,
  },
  /** LangSmith Deployment (formerly LangGraph Platform): per agent run, plus deployment uptime. */
  langGraphPerRun: 0.005,
} as const;

export type PriceTable = typeof PRICES;

export const PRICE_SOURCES: readonly { what: string; url: string; note: string }[] = [
  { what: "Lambda", url: "https://aws.amazon.com/lambda/pricing/", note: "Arm $0.0000133334 per GB-s (first 7.5 B GB-s/month), $0.20 per 1 M requests" },
  { what: "Step Functions", url: "https://aws.amazon.com/step-functions/pricing/", note: "Standard: $0.025 per 1,000 state transitions, retries counted" },
  { what: "DynamoDB", url: "https://aws.amazon.com/dynamodb/pricing/on-demand/", note: "on-demand: $0.625 per 1 M WRU, $0.125 per 1 M RRU" },
  { what: "SQS", url: "https://aws.amazon.com/sqs/pricing/", note: "FIFO: $0.50 per 1 M requests; a request is up to 64 KB" },
  { what: "API Gateway", url: "https://aws.amazon.com/api-gateway/pricing/", note: "WebSocket: $1.00 per 1 M messages (32 KB increments), $0.25 per 1 M connection minutes; REST $3.50 per 1 M" },
  { what: "CloudWatch Logs", url: "https://aws.amazon.com/cloudwatch/pricing/", note: "Standard logs: $0.50 per GB ingested" },
  { what: "X-Ray", url: "https://aws.amazon.com/xray/pricing/", note: "$5.00 per 1 M traces recorded; default sampling rule: the first request each second, then 5%" },
  {
    what: "LangGraph Platform",
    url: "https://docs.langchain.com/langsmith/billing",
    note: "LangSmith Deployment (formerly LangGraph Platform): $0.005 per agent run, deployment uptime billed on top",
  },
];
