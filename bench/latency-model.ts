/**
 * What a clean run's latency would be in AWS, modelled from what it did on
 * the local stack: the metered calls, state entries and Lambda invocations
 * that finished between the `agent` request and the lifecycle end frame, each
 * priced at a per-call latency for one region. Pure, so it is unit-tested.
 *
 * The run path does not await every call in turn (independent writes go out
 * side by side), so the metered calls count along the longest chain of calls
 * in which each started after the one before it finished on the local stack:
 * calls in flight together are on different branches. Two calls that happened
 * one after the other locally are chained even if neither waited for the
 * other, so this is an upper bound of the run's real critical path at these
 * latencies. State transitions, Lambda invoke overheads and the queue's
 * delivery are points in the local timeline, not intervals (a state is entered
 * inside the StartExecution that starts it, locally): each counts in turn, as
 * before. The sum of every call (each awaited in turn) is reported too.
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
  /** Calls per run (mean over the runs). */
  perRun: number;
  /** Of them, on the critical path (mean over the runs). */
  onPathPerRun: number;
  msEach: number;
  /** onPathPerRun x msEach. */
  ms: number;
}

export interface LatencyModel {
  rows: LatencyModelRow[];
  /** The mean critical path: the modelled AWS time of a run besides the model and the handlers' own CPU. */
  modelledMs: number;
  /** Every call awaited in turn (the sum of all of them): what the run would take without any call side by side. */
  serialMs: number;
  runs: number;
}

interface PathNode {
  start: number;
  end: number;
  category: LatencyCategory;
  ms: number;
}

/**
 * The run's critical path: every point event (state transition, invoke,
 * delivery), then the longest chain of metered calls each of which started
 * after the previous one finished (locally).
 */
export function criticalChain(events: readonly TimedEvent[], latencies: Record<LatencyCategory, CallLatency> = CALL_LATENCIES): PathNode[] {
  const node = (event: TimedEvent): PathNode => ({ start: event.startedAt ?? event.at, end: event.at, category: categoryOf(event.what), ms: latencies[categoryOf(event.what)].ms });
  const points = events.filter((event) => event.startedAt === undefined).map(node);
  const calls = events.filter((event) => event.startedAt !== undefined).map(node);
  return [...points, ...longestChain(calls)].sort((a, b) => a.start - b.start);
}

function longestChain(unsorted: readonly PathNode[]): PathNode[] {
  const nodes = [...unsorted].sort((a, b) => a.start - b.start || a.end - b.end);
  const best: number[] = [];
  const previous: number[] = [];
  for (let i = 0; i < nodes.length; i += 1) {
    best[i] = nodes[i].ms;
    previous[i] = -1;
    for (let j = 0; j < i; j += 1) {
      if (nodes[j].end <= nodes[i].start && best[j] + nodes[i].ms > best[i]) {
        best[i] = best[j] + nodes[i].ms;
        previous[i] = j;
      }
    }
  }
  let last = -1;
  for (let i = 0; i < nodes.length; i += 1) if (last < 0 || best[i] > best[last]) last = i;
  const chain: PathNode[] = [];
  for (let i = last; i >= 0; i = previous[i]) chain.unshift(nodes[i]);
  return chain;
}

/** `paths`: per run, the timeline entries between its request and its end frame. */
export function modelLatency(paths: readonly (readonly TimedEvent[])[], latencies: Record<LatencyCategory, CallLatency> = CALL_LATENCIES): LatencyModel {
  const runs = paths.length;
  const counts = new Map<LatencyCategory, { all: number; onPath: number }>();
  const tally = (category: LatencyCategory) => counts.get(category) ?? counts.set(category, { all: 0, onPath: 0 }).get(category)!;
  for (const path of paths) {
    for (const event of path) tally(categoryOf(event.what)).all += 1;
    for (const node of criticalChain(path, latencies)) tally(node.category).onPath += 1;
  }
  const perRun = (n: number) => (runs ? n / runs : 0);
  const rows = [...counts.entries()]
    .map(([category, { all, onPath }]) => ({ category, perRun: perRun(all), onPathPerRun: perRun(onPath), msEach: latencies[category].ms, ms: perRun(onPath) * latencies[category].ms }))
    .sort((a, b) => b.ms - a.ms || b.perRun - a.perRun);
  return {
    rows,
    modelledMs: rows.reduce((sum, row) => sum + row.ms, 0),
    serialMs: rows.reduce((sum, row) => sum + row.perRun * row.msEach, 0),
    runs,
  };
}

/** The per-call latency a region would add to a function's call, for the local edge (`callLatencyMs`). */
export function awsLikeLatency(call: { action: string }): number {
  return CALL_LATENCIES[categoryOf(call.action)].ms;
}
