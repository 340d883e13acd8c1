import type { Tracer } from "@aws-lambda-powertools/tracer";
import type { MiddlewareObj } from "@middy/core";

/**
 * The Powertools Tracer, loaded only when tracing can be on. Importing it
 * evaluates aws-xray-sdk-core (with cls-hooked and semver), which also turns
 * on async hooks for every promise of the process: with
 * POWERTOOLS_TRACE_ENABLED false (the local deployer, or the construct's
 * `tracing: false`) a function pays none of that (issue 15, bundle import
 * times). The same false values as Powertools' own getBooleanFromEnv.
 *
 * Off too wherever the Tracer would switch itself off (Tracer.setTracingEnabled):
 * outside a Lambda execution environment (no AWS_EXECUTION_ENV: the local
 * stack's main process, which builds admin deps from this code and runs every
 * emulator on the thread those hooks slow down), under SAM local and Amplify's mock.
 */
const FALSE_VALUES = new Set(["0", "n", "no", "f", "false", "off"]);

export function tracingOffIn(env: NodeJS.ProcessEnv): boolean {
  const executionEnv = env.AWS_EXECUTION_ENV ?? "";
  return (
    FALSE_VALUES.has((env.POWERTOOLS_TRACE_ENABLED ?? "").trim().toLowerCase()) ||
    executionEnv === "" ||
    executionEnv === "AWS_Lambda_amplify-mock" ||
    (env.AWS_SAM_LOCAL ?? "") !== ""
  );
}

export const tracingSwitchedOff = tracingOffIn(process.env);

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
