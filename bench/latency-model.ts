/**
 * What a clean run's latency would be in AWS, modelled from what it did on
 * the local stack: the metered calls, state entries and Lambda invocations
 * that finished between the `agent` request and the lifecycle end frame (the
 * user-visible critical path; the run path awaits each of them in turn), each
 * priced at a per-call latency for one region. Pure, so it is unit-tested.
 *
 * The per-call figures are modelled, not measured here: each says where it
 * comes from and whether that source publishes a number or is an assumption.
 */
import type { TimedEvent } from "./recorder";

export type LatencyCategory = "dynamodb" | "sqs-send" | "sqs-receive" | "sqs-other" | "sfn-api" | "state-transition" | "lambda-invoke" | "post-to-connection" | "other";

export interface CallLatency {
  category: LatencyCategory;
  label: string;
  /** Modelled latency of one call in us-east-1 from a caller in the same region. */
  ms: number;
  /** published = the provider states the figure; third-party = someone measured it; assumption = our estimate. */
  kind: "published" | "third-party" | "assumption";
  source: string;
  url: string;
}

export const CALL_LATENCIES: Record<LatencyCategory, CallLatency> = {
  dynamodb: {
    category: "dynamodb",
    label: "DynamoDB request (GetItem, PutItem, UpdateItem, Query, ...)",
    ms: 5,
    kind: "published",
    source: "DynamoDB: \"single-digit millisecond performance at any scale\" (in-region; 5 ms taken as a typical mid value)",
    url: "https://aws.amazon.com/dynamodb/",
  },
  "sqs-send": {
    category: "sqs-send",
    label: "SQS SendMessage (FIFO)",
    ms: 20,
    kind: "third-party",
    source: "SoftwareMill's SQS latency measurements (tens of ms per send within a region; FIFO adds deduplication)",
    url: "https://softwaremill.com/amazon-sqs-performance-latency/",
  },
  "sqs-receive": {
    category: "sqs-receive",
    label: "SQS message available -> event-source poll delivers it",
    ms: 20,
    kind: "third-party",
    source: "same measurements (receive of an available message, long polling)",
    url: "https://softwaremill.com/amazon-sqs-performance-latency/",
  },
  "sqs-other": {
    category: "sqs-other",
    label: "other SQS requests (DeleteMessage, ChangeMessageVisibility)",
    ms: 15,
    kind: "assumption",
    source: "assumed a little below a send",
    url: "https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/welcome.html",
  },
  "sfn-api": {
    category: "sfn-api",
    label: "Step Functions API call (StartExecution, SendTaskSuccess, ...)",
    ms: 25,
    kind: "assumption",
    source: "no published per-call latency; assumed comparable to other control-plane-backed data calls",
    url: "https://docs.aws.amazon.com/step-functions/latest/apireference/API_StartExecution.html",
  },
  "state-transition": {
    category: "state-transition",
    label: "Step Functions Standard state transition",
    ms: 20,
    kind: "assumption",
    source: "no published per-transition latency for Standard workflows (Express is documented as lower-latency); assumed",
    url: "https://docs.aws.amazon.com/step-functions/latest/dg/choosing-workflow-type.html",
  },
  "lambda-invoke": {
    category: "lambda-invoke",
    label: "Lambda invoke overhead, warm (around the handler's own time)",
    ms: 15,
    kind: "assumption",
    source: "warm invoke path (front end, placement, runtime API); cold starts excluded (see the bundle import times)",
    url: "https://docs.aws.amazon.com/lambda/latest/dg/lambda-runtime-environment.html",
  },
  "post-to-connection": {
    category: "post-to-connection",
    label: "API Gateway PostToConnection",
    ms: 20,
    kind: "assumption",
    source: "no published latency; assumed one HTTPS round trip to the management API plus delivery",
    url: "https://docs.aws.amazon.com/apigateway/latest/developerguide/apigateway-how-to-call-websocket-api-connections.html",
  },
  other: {
    category: "other",
    label: "other metered calls (Secrets Manager, ...)",
    ms: 10,
    kind: "assumption",
    source: "assumed",
    url: "https://docs.aws.amazon.com/general/latest/gr/aws-service-information.html",
  },
};

/** Which latency an entry of the recorder's timeline costs in AWS. */
export function categoryOf(what: string): LatencyCategory {
  if (what.startsWith("state:")) return "state-transition";
  if (what.startsWith("lambda:")) return "lambda-invoke";
  if (what.startsWith("dynamodb:")) return "dynamodb";
  if (what === "sqs:SendMessage" || what === "sqs:SendMessageBatch") return "sqs-send";
  if (what === "sqs:ReceiveMessage") return "sqs-receive";
  if (what.startsWith("sqs:")) return "sqs-other";
  if (what.startsWith("states:")) return "sfn-api";
  if (what.startsWith("execute-api:")) return "post-to-connection";
  return "other";
}

export interface LatencyModelRow {
  category: LatencyCategory;
  /** Calls per run on the critical path (mean over the runs). */
  perRun: number;
  msEach: number;
  ms: number;
}

export interface LatencyModel {
  rows: LatencyModelRow[];
  /** Sum of the rows: the modelled AWS time of a run besides the model and the handlers' own CPU. */
  modelledMs: number;
  runs: number;
}

/** `paths`: per run, the timeline entries between its request and its end frame. */
export function modelLatency(paths: readonly (readonly TimedEvent[])[], latencies: Record<LatencyCategory, CallLatency> = CALL_LATENCIES): LatencyModel {
  const runs = paths.length;
  const counts = new Map<LatencyCategory, number>();
  for (const path of paths) for (const event of path) counts.set(categoryOf(event.what), (counts.get(categoryOf(event.what)) ?? 0) + 1);
  const rows = [...counts.entries()]
    .map(([category, n]) => {
      const perRun = runs ? n / runs : 0;
      return { category, perRun, msEach: latencies[category].ms, ms: perRun * latencies[category].ms };
    })
    .sort((a, b) => b.ms - a.ms);
  return { rows, modelledMs: rows.reduce((sum, row) => sum + row.ms, 0), runs };
}
