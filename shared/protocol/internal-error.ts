import { ApiError } from "./errors";

/**
 * What a caller sees of a failure we did not expect: a fixed message and the
 * request id to quote, never the error's own text (which carries ARNs,
 * account ids, table names, provider messages). The detail goes to the log
 * under the same request id (`internalErrorLog`).
 */
export function internalError(requestId: string): ApiError {
  return new ApiError("INTERNAL", `internal error (request id ${requestId})`, { requestId });
}

/** The log fields of an unexpected error: everything the caller does not get. */
export function internalErrorLog(error: unknown, requestId: string): Record<string, unknown> {
  if (!(error instanceof Error)) return { requestId, error: String(error) };
  return { requestId, errorName: error.name, error: error.message, stack: error.stack };
}
