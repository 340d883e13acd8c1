import { Logger } from "@aws-lambda-powertools/logger";
import { Metrics } from "@aws-lambda-powertools/metrics";
import type { Tracer } from "@aws-lambda-powertools/tracer";
import { METRICS_NAMESPACE } from "./names";
import { createTracer } from "./tracer";

/** POWERTOOLS_SERVICE_NAME of every function (infra/functions.ts sets the same). */
export const DEFAULT_SERVICE_NAME = "agent-runner";

export interface Powertools {
  logger: Logger;
  metrics: Metrics;
  /** Undefined when POWERTOOLS_TRACE_ENABLED is false: the X-Ray SDK is then never loaded (./tracer.ts). */
  tracer: Tracer | undefined;
}

let instances: Powertools | undefined;

/**
 * One Logger, Metrics and Tracer per function instance (Powertools' own
 * model: module scope, reused while the container lives). Created on first
 * use so they read the environment the sandbox was started with:
 * POWERTOOLS_LOG_LEVEL, POWERTOOLS_METRICS_NAMESPACE, POWERTOOLS_TRACE_ENABLED
 * (the local deployer sets it to false: there is no X-Ray daemon on loopback).
 */
export function powertools(): Powertools {
  instances ??= {
    logger: new Logger({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? DEFAULT_SERVICE_NAME }),
    metrics: new Metrics({
      namespace: process.env.POWERTOOLS_METRICS_NAMESPACE ?? METRICS_NAMESPACE,
      serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? DEFAULT_SERVICE_NAME,
    }),
    tracer: createTracer(process.env.POWERTOOLS_SERVICE_NAME ?? DEFAULT_SERVICE_NAME),
  };
  return instances;
}
