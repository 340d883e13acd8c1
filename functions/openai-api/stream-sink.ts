import type { Writable } from "node:stream";
import type { ResponseSink } from "./http";

/**
 * A ResponseSink over Lambda's response stream. `HttpResponseStream.from`
 * writes the status and headers as the prelude API Gateway (and function
 * URLs) read before the body; every later write reaches the caller as it is
 * made. Locally, infra/local/lambda/bootstrap.mjs provides the same
 * `awslambda` global with the same wire format.
 */
export function lambdaStreamSink(responseStream: Writable): ResponseSink {
  let body: Writable | undefined;
  return {
    start(statusCode, headers) {
      body = awslambda.HttpResponseStream.from(responseStream, { statusCode, headers });
    },
    write(text) {
      (body ?? responseStream).write(text);
    },
    end() {
      return new Promise<void>((resolve) => (body ?? responseStream).end(() => resolve()));
    },
  };
}
