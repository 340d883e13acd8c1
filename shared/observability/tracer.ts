import type { Tracer } from "@aws-lambda-powertools/tracer";
import type { MiddlewareObj } from "@middy/core";

/**
 * The Powertools Tracer, loaded only when tracing can be on. Importing it
 * evaluates aws-xray-sdk-core (with cls-hooked and semver), which also turns
 * on async hooks for every promise of the sandbox: with
 * POWERTOOLS_TRACE_ENABLED false (the local deployer, or the construct's
 * `tracing: false`) a function pays none of that (issue 15, bundle import
 * times). The same false values as Powertools' own getBooleanFromEnv.
 */
const FALSE_VALUES = new Set(["0", "n", "no", "f", "false", "off"]);

export const tracingSwitchedOff = FALSE_VALUES.has((process.env.POWERTOOLS_TRACE_ENABLED ?? "").trim().toLowerCase());

interface TracerModules {
  Tracer: typeof Tracer;
  captureLambdaHandler: (tracer: Tracer, options: { captureResponse: boolean }) => MiddlewareObj;
}

// Top-level await: a function's module graph is evaluated once per sandbox, before its first invocation.
const modules: TracerModules | undefined = tracingSwitchedOff
  ? undefined
  : {
      Tracer: (await import("@aws-lambda-powertools/tracer")).Tracer,
      captureLambdaHandler: (await import("@aws-lambda-powertools/tracer/middleware")).captureLambdaHandler as TracerModules["captureLambdaHandler"],
    };

/** A Tracer for this function instance, or undefined when tracing is switched off. */
export function createTracer(serviceName: string): Tracer | undefined {
  return modules ? new modules.Tracer({ serviceName }) : undefined;
}

/** The X-Ray segment middleware for `tracer` (none without a tracer). */
export function tracerMiddleware(tracer: Tracer | undefined): MiddlewareObj | undefined {
  return tracer && modules ? modules.captureLambdaHandler(tracer, { captureResponse: false }) : undefined;
}
