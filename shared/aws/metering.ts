/**
 * SDK-client metering for the benchmark's cost model: a middleware that counts
 * every AWS call per service and operation and turns it into the units AWS
 * bills. Off unless a `SdkMeter` is put into `RuntimeConfig.meter` (the bench
 * does; production never does), so handler code is unchanged.
 *
 * What is counted, and why that way:
 * - DynamoDB: the middleware asks for `ReturnConsumedCapacity: "TOTAL"` when
 *   the caller did not, and sums the `ConsumedCapacity` DynamoDB returns
 *   (dynalite returns it too, computed with DynamoDB's rules: 4 KB per read
 *   unit, halved for eventually consistent reads; 1 KB per write unit; a
 *   Query sums its items' sizes before rounding, and is charged at least one
 *   read request even when nothing matches). A write whose condition
 *   fails returns no capacity but is still billed by DynamoDB; it is charged
 *   one write unit here (exact for items up to 1 KB, a lower bound above).
 * - SQS: one request per 64 KB of payload (SQS bills in 64 KB chunks);
 *   receives that return no message are counted apart (`emptyResults`):
 *   they are idle polling, not work a run caused.
 * - API Gateway Management API: `PostToConnection` is one WebSocket message
 *   per 32 KB (API Gateway meters messages in 32 KB increments).
 * - Step Functions API calls are counted but cost nothing themselves; the
 *   state transitions they cause are counted by the bench from the executions.
 */

export type MeteredService = "dynamodb" | "sqs" | "sfn" | "apigw-management";

export interface OperationTally {
  calls: number;
  errors: number;
  /** DynamoDB read request units (on-demand RRU == provisioned RCU arithmetic). */
  readUnits: number;
  /** DynamoDB write request units. */
  writeUnits: number;
  /** Writes DynamoDB refused on their condition (each charged 1 WRU above). */
  conditionFailures: number;
  /** Billable requests / messages after size rounding (SQS 64 KB, WebSocket 32 KB). */
  billedRequests: number;
  /** Payload bytes sent (SQS message bodies, WebSocket frames). */
  bytes: number;
  /** Receives that returned nothing (idle polling). */
  emptyResults: number;
}

/** Tallies keyed `service:Operation`, e.g. `dynamodb:PutItem`. */
export type MeterSnapshot = Record<string, OperationTally>;

/** The slice of an SDK v3 client the meter needs (every v3 client has it). */
export interface MeterableClient {
  middlewareStack: { add(middleware: unknown, options: { step: "initialize"; name: string; override?: boolean }): void };
}

export const SQS_BILLING_CHUNK_BYTES = 64 * 1024;
export const WS_MESSAGE_BILLING_BYTES = 32 * 1024;

const DYNAMO_READS = new Set(["GetItem", "Query", "Scan", "BatchGetItem", "TransactGetItems"]);
const DYNAMO_CAPACITY_OPERATIONS = new Set([
  ...DYNAMO_READS,
  "PutItem",
  "UpdateItem",
  "DeleteItem",
  "BatchWriteItem",
  "TransactWriteItems",
]);

const MIDDLEWARE_NAME = "agentRunnerSdkMeter";

type Input = Record<string, unknown>;
type Handler = (args: { input: Input }) => Promise<{ output: Record<string, unknown> }>;

export class SdkMeter {
  private tallies: MeterSnapshot = {};

  /** Adds the metering middleware to one client (idempotent per client). */
  attach(client: MeterableClient, service: MeteredService): void {
    const middleware = (next: Handler, context: { commandName?: string }) => async (args: { input: Input }) => {
      const operation = (context.commandName ?? "Unknown").replace(/Command$/, "");
      const input = service === "dynamodb" ? withCapacityRequest(operation, args.input) : args.input;
      const tally = this.tally(service, operation);
      tally.calls += 1;
      countRequest(service, operation, input, tally);
      try {
        const result = await next({ ...args, input });
        countResult(service, operation, input, result.output, tally);
        return result;
      } catch (error) {
        tally.errors += 1;
        if ((error as { name?: string }).name === "ConditionalCheckFailedException") {
          tally.conditionFailures += 1;
          tally.writeUnits += 1;
        }
        throw error;
      }
    };
    client.middlewareStack.add(middleware, { step: "initialize", name: MIDDLEWARE_NAME, override: true });
  }

  /**
   * Counts one call seen on the wire (the local edge), for functions whose
   * SDK clients run in other threads: same tallies as the middleware.
   */
  recordWire(call: { service: string; action: string; statusCode: number; requestBody: Uint8Array; responseBody: Uint8Array }): void {
    const service = WIRE_SERVICES[call.service];
    if (!service) return;
    const input = parseJson(call.requestBody);
    const operation = service === "apigw-management" ? (call.requestBody.byteLength > 0 ? "PostToConnection" : "GetConnection") : call.action.split(":")[1] ?? "Unknown";
    const tally = this.tally(service, operation);
    tally.calls += 1;
    countRequest(service, operation, service === "apigw-management" ? { Data: call.requestBody } : input, tally);
    const output = parseJson(call.responseBody);
    if (call.statusCode >= 300) {
      tally.errors += 1;
      if (String(output.__type ?? "").endsWith("ConditionalCheckFailedException")) {
        tally.conditionFailures += 1;
        tally.writeUnits += 1;
      }
      return;
    }
    countResult(service, operation, input, output, tally);
  }

  /** A deep copy of the tallies so far. */
  snapshot(): MeterSnapshot {
    return Object.fromEntries(Object.entries(this.tallies).map(([key, tally]) => [key, { ...tally }]));
  }

  reset(): void {
    this.tallies = {};
  }

  private tally(service: MeteredService, operation: string): OperationTally {
    const key = `${service}:${operation}`;
    this.tallies[key] ??= emptyTally();
    return this.tallies[key];
  }
}

export function emptyTally(): OperationTally {
  return { calls: 0, errors: 0, readUnits: 0, writeUnits: 0, conditionFailures: 0, billedRequests: 0, bytes: 0, emptyResults: 0 };
}

/** `after - before`, per key (keys only in `after` count from zero). */
export function diffSnapshots(before: MeterSnapshot, after: MeterSnapshot): MeterSnapshot {
  const out: MeterSnapshot = {};
  for (const [key, tally] of Object.entries(after)) {
    const base = before[key] ?? emptyTally();
    const delta = Object.fromEntries(
      (Object.keys(tally) as (keyof OperationTally)[]).map((field) => [field, tally[field] - base[field]]),
    ) as unknown as OperationTally;
    if (delta.calls !== 0 || delta.errors !== 0) out[key] = delta;
  }
  return out;
}

/** Sum of one field over the keys of a service. */
export function sumOf(snapshot: MeterSnapshot, service: MeteredService, field: keyof OperationTally): number {
  return Object.entries(snapshot)
    .filter(([key]) => key.startsWith(`${service}:`))
    .reduce((sum, [, tally]) => sum + tally[field], 0);
}

function withCapacityRequest(operation: string, input: Input): Input {
  if (!DYNAMO_CAPACITY_OPERATIONS.has(operation) || input.ReturnConsumedCapacity !== undefined) return input;
  return { ...input, ReturnConsumedCapacity: "TOTAL" };
}

function countRequest(service: MeteredService, operation: string, input: Input, tally: OperationTally): void {
  if (service === "sqs") {
    const bytes = sqsPayloadBytes(operation, input);
    tally.bytes += bytes;
    tally.billedRequests += Math.max(1, Math.ceil(bytes / SQS_BILLING_CHUNK_BYTES));
  } else if (service === "apigw-management" && operation === "PostToConnection") {
    const bytes = payloadBytes(input.Data);
    tally.bytes += bytes;
    tally.billedRequests += Math.max(1, Math.ceil(bytes / WS_MESSAGE_BILLING_BYTES));
  } else {
    tally.billedRequests += 1;
  }
}

function countResult(service: MeteredService, operation: string, input: Input, output: Record<string, unknown>, tally: OperationTally): void {
  if (service === "dynamodb") {
    let units = consumedUnits(output.ConsumedCapacity);
    // A Query or Scan that matches nothing is still one read request (dynalite reports 0).
    if (operation === "Query" || operation === "Scan") units = Math.max(units, input.ConsistentRead === true ? 1 : 0.5);
    if (DYNAMO_READS.has(operation)) tally.readUnits += units;
    else tally.writeUnits += units;
  } else if (service === "sqs" && operation === "ReceiveMessage") {
    const received = Array.isArray(output.Messages) ? output.Messages.length : 0;
    if (received === 0) tally.emptyResults += 1;
  }
}

/** `ConsumedCapacity` is one object for item operations and an array for batches. */
export function consumedUnits(consumed: unknown): number {
  const list = Array.isArray(consumed) ? consumed : consumed ? [consumed] : [];
  return list.reduce((sum: number, entry) => sum + (Number((entry as { CapacityUnits?: unknown }).CapacityUnits) || 0), 0);
}

function sqsPayloadBytes(operation: string, input: Input): number {
  if (operation === "SendMessage") return payloadBytes(input.MessageBody) + attributeBytes(input.MessageAttributes);
  if (operation === "SendMessageBatch" && Array.isArray(input.Entries)) {
    return input.Entries.reduce((sum: number, entry) => sum + payloadBytes((entry as Input).MessageBody) + attributeBytes((entry as Input).MessageAttributes), 0);
  }
  return 0;
}

function attributeBytes(attributes: unknown): number {
  if (!attributes || typeof attributes !== "object") return 0;
  return payloadBytes(JSON.stringify(attributes));
}

function payloadBytes(value: unknown): number {
  if (value === undefined || value === null) return 0;
  if (typeof value === "string") return Buffer.byteLength(value, "utf8");
  if (value instanceof Uint8Array) return value.byteLength;
  return Buffer.byteLength(JSON.stringify(value), "utf8");
}

const WIRE_SERVICES: Record<string, MeteredService> = { dynamodb: "dynamodb", sqs: "sqs", states: "sfn", "execute-api": "apigw-management" };

function parseJson(bytes: Uint8Array): Input {
  try {
    const value = JSON.parse(Buffer.from(bytes).toString("utf8")) as unknown;
    return value && typeof value === "object" ? (value as Input) : {};
  } catch {
    return {};
  }
}

/** Asks DynamoDB for ConsumedCapacity on a wire request (what the middleware does in-process). */
export function withCapacityRequestBody(service: string, request: { headers: Record<string, string>; body: Buffer }): Buffer | undefined {
  if (service !== "dynamodb") return undefined;
  const operation = (request.headers["x-amz-target"] ?? "").split(".")[1] ?? "";
  if (!DYNAMO_CAPACITY_OPERATIONS.has(operation)) return undefined;
  const input = parseJson(request.body);
  if (input.ReturnConsumedCapacity !== undefined) return undefined;
  return Buffer.from(JSON.stringify({ ...input, ReturnConsumedCapacity: "TOTAL" }));
}
