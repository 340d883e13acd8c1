/**
 * Cost arithmetic: what one run used (counted, never estimated) times the
 * price table. Pure functions, so the arithmetic is unit-tested on its own.
 */
import { FUNCTION_SPECS, type FunctionKey } from "../infra/functions";
import { sumOf } from "../shared/aws/metering";
import type { PriceTable } from "./prices";
import type { LambdaTally, WindowUsage } from "./recorder";

/** Usage of one average run (fractions allowed: a window of K runs divided by K). */
export interface RunUsage {
  lambda: Partial<Record<FunctionKey, LambdaTally>>;
  stateTransitions: number;
  dynamoReadUnits: number;
  dynamoWriteUnits: number;
  /** Billable SQS requests; receives that found nothing are idle polling and left out. */
  sqsRequests: number;
  /** Messages the client sent plus frames posted to it (32 KB units). */
  webSocketMessages: number;
  webSocketConnectionMinutes: number;
}

/** Dollars for one run, per service. */
export interface CostBreakdown {
  lambdaRequests: number;
  lambdaDuration: number;
  stepFunctions: number;
  dynamodb: number;
  sqs: number;
  apiGateway: number;
  total: number;
}

export type MemoryTable = Partial<Record<FunctionKey, number>>;

/** The configured memory of each function (infra/functions.ts). */
export function configuredMemory(): MemoryTable {
  return Object.fromEntries(Object.values(FUNCTION_SPECS).map((spec) => [spec.key, spec.memoryMb]));
}

export function gbSeconds(billedMs: number, memoryMb: number): number {
  return (billedMs / 1000) * (memoryMb / 1024);
}

export function costOfRun(usage: RunUsage, memory: MemoryTable, prices: PriceTable): CostBreakdown {
  let invocations = 0;
  let duration = 0;
  for (const [key, tally] of Object.entries(usage.lambda) as [FunctionKey, LambdaTally][]) {
    const memoryMb = memory[key];
    if (memoryMb === undefined) throw new Error(`no configured memory for function ${key}`);
    invocations += tally.invocations;
    duration += gbSeconds(tally.billedMs, memoryMb) * prices.lambda.perGbSecond;
  }
  const parts = {
    lambdaRequests: invocations * prices.lambda.perRequest,
    lambdaDuration: duration,
    stepFunctions: usage.stateTransitions * prices.stepFunctions.perStateTransition,
    dynamodb:
      usage.dynamoReadUnits * prices.dynamodb.perReadRequestUnit + usage.dynamoWriteUnits * prices.dynamodb.perWriteRequestUnit,
    sqs: usage.sqsRequests * prices.sqs.perFifoRequest,
    apiGateway:
      usage.webSocketMessages * prices.apiGateway.perWebSocketMessage +
      usage.webSocketConnectionMinutes * prices.apiGateway.perConnectionMinute,
  };
  return { ...parts, total: Object.values(parts).reduce((sum, value) => sum + value, 0) };
}

export function scaleBreakdown(breakdown: CostBreakdown, factor: number): CostBreakdown {
  return Object.fromEntries(Object.entries(breakdown).map(([key, value]) => [key, value * factor])) as unknown as CostBreakdown;
}

export interface ClientSide {
  /** WebSocket messages the client sent in the window (its `agent` requests). */
  inboundMessages: number;
  /** Connection minutes the window's runs held (sum of run durations). */
  connectionMinutes: number;
}

/** A measured window of `runs` runs -> the usage of one average run. */
export function usagePerRun(window: WindowUsage, runs: number, client: ClientSide): RunUsage {
  if (runs <= 0) throw new Error("a window needs at least one run");
  const lambda: RunUsage["lambda"] = {};
  for (const [key, tally] of Object.entries(window.lambda) as [FunctionKey, LambdaTally][]) {
    lambda[key] = { invocations: tally.invocations / runs, billedMs: tally.billedMs / runs };
  }
  const sqsBilled = sumOf(window.sdk, "sqs", "billedRequests") - sumOf(window.sdk, "sqs", "emptyResults");
  const posted = window.sdk["apigw-management:PostToConnection"]?.billedRequests ?? 0;
  return {
    lambda,
    stateTransitions: window.stateTransitions / runs,
    dynamoReadUnits: sumOf(window.sdk, "dynamodb", "readUnits") / runs,
    dynamoWriteUnits: sumOf(window.sdk, "dynamodb", "writeUnits") / runs,
    sqsRequests: sqsBilled / runs,
    webSocketMessages: (posted + client.inboundMessages) / runs,
    webSocketConnectionMinutes: client.connectionMinutes / runs,
  };
}

/** What one extra second of model streaming adds per run: the attempt Lambda waits, billed. */
export function costPerModelSecond(memory: MemoryTable, prices: PriceTable): number {
  return gbSeconds(1000, memory.attempt ?? 1024) * prices.lambda.perGbSecond;
}
