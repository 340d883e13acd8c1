/**
 * What a run costs in CloudWatch Logs and X-Ray, which the per-service cost
 * table leaves out. Log bytes the functions wrote are measured (every line a
 * handler logged at the template's log level, as CloudWatch would ingest it);
 * Lambda's own START/END/REPORT lines, API Gateway access log lines and the
 * number of X-Ray traces are modelled. Pure, so it is unit-tested.
 */
import type { PriceTable } from "./prices";

/** Lambda's platform lines per invocation (START, END, REPORT with the X-Ray trace id): about 400 bytes. */
export const PLATFORM_LOG_BYTES_PER_INVOCATION = 400;
/** One API Gateway access log line (`AccessLogFormat.jsonWithStandardFields()`): about 300 bytes. */
export const ACCESS_LOG_BYTES_PER_REQUEST = 300;
/** X-Ray's default sampling rule at scale: 5% of requests after the first one each second. */
export const XRAY_DEFAULT_SAMPLING_AT_SCALE = 0.05;

export interface ObservabilityInput {
  /** Measured: bytes the functions logged per run. */
  functionLogBytes: number;
  /** Measured: Lambda invocations per run. */
  invocations: number;
  /** Measured: API requests per run that write an access log line (WebSocket messages received, REST requests). */
  apiRequests: number;
}

export interface ObservabilityCost {
  /** Modelled + measured bytes ingested per run. */
  logBytes: { functions: number; platform: number; accessLogs: number; total: number };
  logsDollars: number;
  /** Upper bound: one trace per invocation (trace headers not carried across SQS and Step Functions). */
  tracesPerRun: number;
  xrayDollarsAllSampled: number;
  xrayDollarsDefaultSampling: number;
}

export function observabilityCost(input: ObservabilityInput, prices: PriceTable): ObservabilityCost {
  const platform = input.invocations * PLATFORM_LOG_BYTES_PER_INVOCATION;
  const accessLogs = input.apiRequests * ACCESS_LOG_BYTES_PER_REQUEST;
  const total = input.functionLogBytes + platform + accessLogs;
  const tracesPerRun = input.invocations;
  const xrayDollarsAllSampled = tracesPerRun * prices.xray.perTraceRecorded;
  return {
    logBytes: { functions: input.functionLogBytes, platform, accessLogs, total },
    logsDollars: (total / 2 ** 30) * prices.cloudWatchLogs.perGbIngested,
    tracesPerRun,
    xrayDollarsAllSampled,
    xrayDollarsDefaultSampling: xrayDollarsAllSampled * XRAY_DEFAULT_SAMPLING_AT_SCALE,
  };
}
