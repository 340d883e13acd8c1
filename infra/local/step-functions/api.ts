/**
 * The Step Functions operations the local endpoint answers, with AWS's
 * validation and semantics. Request and response shapes are the JSON the
 * AWS JSON 1.0 protocol carries (timestamps as epoch seconds).
 */
import { randomUUID } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import { type ArnScope, assertExecutionArn, assertStateMachineArn, assertValidExecutionName, executionArn } from "./arns";
import { SfnApiError } from "./errors";
import type { ExecutionRecord, ExecutionStatus, ExecutionStore, ExecutionSummary } from "./executions";
import { STATE_PAYLOAD_LIMIT_BYTES } from "./limits";
import type { MachineRegistry } from "./machines";
import type { Runner } from "./runner";
import type { TaskTokenRegistry } from "./task-tokens";

export type JsonObject = Record<string, unknown>;
export type Operation = (request: JsonObject) => JsonObject;

export interface SfnApiDeps {
  scope: ArnScope;
  registry: MachineRegistry;
  store: ExecutionStore;
  runner: Runner;
  tokens: TaskTokenRegistry;
}

const STATUSES: readonly ExecutionStatus[] = ["RUNNING", "SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED"];
const MAX_ERROR_LENGTH = 256;
const MAX_CAUSE_LENGTH = 32_768;
const DEFAULT_PAGE_SIZE = 100;
const MAX_PAGE_SIZE = 1000;

export function sfnOperations(deps: SfnApiDeps): Record<string, Operation> {
  return {
    StartExecution: (request) => startExecution(request, deps),
    DescribeExecution: (request) => describeExecution(request, deps),
    StopExecution: (request) => stopExecution(request, deps),
    ListExecutions: (request) => listExecutions(request, deps),
    // Answers to `.waitForTaskToken` tasks (task-tokens.ts); each returns `{}` like AWS.
    SendTaskSuccess: (request) => (deps.tokens.succeed(request.taskToken, request.output), {}),
    SendTaskFailure: (request) => (
      deps.tokens.fail(request.taskToken, optionalString(request, "error", MAX_ERROR_LENGTH), optionalString(request, "cause", MAX_CAUSE_LENGTH)), {}
    ),
    SendTaskHeartbeat: (request) => (deps.tokens.heartbeat(request.taskToken), {}),
  };
}

/**
 * Standard workflows: StartExecution is idempotent for the same name and
 * input while that execution runs (same executionArn and startDate back);
 * a different input, or a closed execution of that name, is
 * ExecutionAlreadyExists.
 */
function startExecution(request: JsonObject, deps: SfnApiDeps): JsonObject {
  const machineArn = request.stateMachineArn;
  assertStateMachineArn(machineArn);
  const name = optionalString(request, "name") ?? randomUUID();
  assertValidExecutionName(name);
  const machine = deps.registry.get(machineArn);
  if (!machine) throw new SfnApiError("StateMachineDoesNotExist", `State Machine Does Not Exist: '${machineArn}'`);
  const input = optionalString(request, "input") ?? "{}";
  const inputValue = parseExecutionInput(input);
  const arn = executionArn(deps.scope, machine.name, name);
  const existing = deps.store.find(arn);
  if (existing) return idempotentStart(existing, inputValue);
  const record: ExecutionRecord = {
    executionArn: arn,
    stateMachineArn: machine.arn,
    name,
    status: "RUNNING",
    startDate: new Date(),
    input,
    inputValue,
  };
  deps.store.add(record);
  deps.runner.launch(record, machine);
  return startOutput(record);
}

function idempotentStart(existing: ExecutionRecord, inputValue: unknown): JsonObject {
  if (existing.status === "RUNNING" && isDeepStrictEqual(existing.inputValue, inputValue)) {
    return startOutput(existing);
  }
  throw new SfnApiError("ExecutionAlreadyExists", `Execution Already Exists: '${existing.executionArn}'`);
}

function startOutput(record: ExecutionRecord): JsonObject {
  return { executionArn: record.executionArn, startDate: epochSeconds(record.startDate) };
}

function parseExecutionInput(input: string): unknown {
  if (Buffer.byteLength(input, "utf8") > STATE_PAYLOAD_LIMIT_BYTES) {
    throw new SfnApiError(
      "InvalidExecutionInput",
      `Invalid State Machine Execution Input: 'input exceeds the maximum size of ${STATE_PAYLOAD_LIMIT_BYTES} bytes'`,
    );
  }
  try {
    return JSON.parse(input);
  } catch (error) {
    throw new SfnApiError("InvalidExecutionInput", `Invalid State Machine Execution Input: '${(error as Error).message}'`);
  }
}

function describeExecution(request: JsonObject, deps: SfnApiDeps): JsonObject {
  const record = findExecution(request, deps);
  return {
    executionArn: record.executionArn,
    stateMachineArn: record.stateMachineArn,
    name: record.name,
    status: record.status,
    startDate: epochSeconds(record.startDate),
    stopDate: record.stopDate && epochSeconds(record.stopDate),
    // An old closed execution keeps only its summary (executions.ts): AWS's "not included" shape, not an empty input.
    input: record.input,
    inputDetails: { included: record.input !== undefined },
    output: record.output,
    outputDetails: outputDetails(record),
    error: record.error,
    cause: record.cause,
    redriveCount: 0,
    redriveStatus: "NOT_REDRIVABLE",
  };
}

function outputDetails(record: ExecutionRecord): { included: boolean } | undefined {
  if (record.output !== undefined) return { included: true };
  const summarized = record.input === undefined;
  return summarized && record.status === "SUCCEEDED" ? { included: false } : undefined;
}

/** Stopping a closed execution succeeds and changes nothing, as in AWS. */
function stopExecution(request: JsonObject, deps: SfnApiDeps): JsonObject {
  const record = findExecution(request, deps);
  const error = optionalString(request, "error", MAX_ERROR_LENGTH);
  const cause = optionalString(request, "cause", MAX_CAUSE_LENGTH);
  deps.runner.stop(record, { error, cause });
  return { stopDate: epochSeconds(record.stopDate ?? new Date()) };
}

function listExecutions(request: JsonObject, deps: SfnApiDeps): JsonObject {
  const machineArn = request.stateMachineArn;
  assertStateMachineArn(machineArn);
  if (!deps.registry.get(machineArn)) {
    throw new SfnApiError("StateMachineDoesNotExist", `State Machine Does Not Exist: '${machineArn}'`);
  }
  const status = statusFilter(request);
  const all = deps.store.list(machineArn, status);
  const offset = pageOffset(request);
  const pageSize = pageSizeOf(request);
  const page = all.slice(offset, offset + pageSize);
  const nextOffset = offset + page.length;
  return {
    executions: page.map(listItem),
    nextToken: nextOffset < all.length ? Buffer.from(String(nextOffset)).toString("base64") : undefined,
  };
}

function listItem(summary: ExecutionSummary): JsonObject {
  return {
    executionArn: summary.executionArn,
    stateMachineArn: summary.stateMachineArn,
    name: summary.name,
    status: summary.status,
    startDate: epochSeconds(summary.startDate),
    stopDate: summary.stopDate && epochSeconds(summary.stopDate),
  };
}

function findExecution(request: JsonObject, deps: SfnApiDeps): ExecutionRecord {
  const arn = request.executionArn;
  assertExecutionArn(arn);
  const record = deps.store.find(arn);
  if (!record) throw new SfnApiError("ExecutionDoesNotExist", `Execution Does Not Exist: '${arn}'`);
  return record;
}

function statusFilter(request: JsonObject): ExecutionStatus | undefined {
  const value = request.statusFilter;
  if (value === undefined) return undefined;
  if (STATUSES.includes(value as ExecutionStatus)) return value as ExecutionStatus;
  throw new SfnApiError(
    "ValidationException",
    `1 validation error detected: Value '${String(value)}' at 'statusFilter' failed to satisfy constraint: Member must satisfy enum value set: [${STATUSES.join(", ")}]`,
  );
}

function pageSizeOf(request: JsonObject): number {
  const value = request.maxResults;
  if (value === undefined || value === 0) return DEFAULT_PAGE_SIZE;
  if (typeof value === "number" && Number.isInteger(value) && value > 0 && value <= MAX_PAGE_SIZE) return value;
  throw new SfnApiError("ValidationException", `1 validation error detected: Value '${String(value)}' at 'maxResults' failed to satisfy constraint: Member must have value less than or equal to ${MAX_PAGE_SIZE}`);
}

function pageOffset(request: JsonObject): number {
  const token = request.nextToken;
  if (token === undefined) return 0;
  const offset = typeof token === "string" ? Number(Buffer.from(token, "base64").toString()) : Number.NaN;
  if (Number.isInteger(offset) && offset >= 0) return offset;
  throw new SfnApiError("ValidationException", "Invalid Token: 'Invalid token'");
}

function optionalString(request: JsonObject, field: string, maxLength?: number): string | undefined {
  const value = request[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") {
    throw new SfnApiError("ValidationException", `1 validation error detected: Value at '${field}' must be a string`);
  }
  if (maxLength !== undefined && value.length > maxLength) {
    throw new SfnApiError(
      "ValidationException",
      `1 validation error detected: Value at '${field}' failed to satisfy constraint: Member must have length less than or equal to ${maxLength}`,
    );
  }
  return value;
}

function epochSeconds(date: Date): number {
  return date.getTime() / 1000;
}
