import middy, { type MiddlewareObj } from "@middy/core";
import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import type { Context } from "aws-lambda";
import { correlationKeysOf } from "./correlation";
import { powertools, type Powertools } from "./powertools";
import { tracerMiddleware } from "./tracer";

/**
 * Appends the event's correlation keys after `injectLambdaContext` cleared
 * the previous invocation's (resetKeys), so every line of this invocation
 * carries them.
 */
function correlationKeys(tools: Powertools): MiddlewareObj {
  return {
    before: (request) => {
      const keys = correlationKeysOf(request.event);
      tools.logger.appendKeys(keys);
      if (keys.runId !== undefined) tools.tracer?.putAnnotation("runId", String(keys.runId));
    },
  };
}

/**
 * Publishes the invocation's metrics, like Powertools' `logMetrics`, but
 * silently when there are none: most invocations of the API functions record
 * no business metric and `logMetrics` would warn on each of them.
 */
function flushMetrics(tools: Powertools): MiddlewareObj {
  const flush = () => {
    if (tools.metrics.hasStoredMetrics()) tools.metrics.publishStoredMetrics();
  };
  return { after: flush, onError: flush };
}

/**
 * A Lambda entry with the operations middleware every function gets: the
 * Lambda context on every log line (cold start, request id, function) plus
 * correlation keys, an X-Ray segment with the SDK clients captured (left out,
 * with the X-Ray SDK never loaded, when POWERTOOLS_TRACE_ENABLED=false, as
 * locally) and the EMF flush.
 */
export function observedHandler<E, R>(handler: (event: E, context: Context) => Promise<R>) {
  const tools = powertools();
  const tracing = tracerMiddleware(tools.tracer);
  return middy<E, R, Error, Context>()
    .use(injectLambdaContext(tools.logger, { resetKeys: true }))
    .use(correlationKeys(tools))
    .use(tracing ? [tracing] : [])
    .use(flushMetrics(tools))
    .handler(handler);
}
