/**
 * The response side of the OpenAI handler: a small sink that both a
 * buffered JSON answer and a Lambda response stream satisfy, and OpenAI's
 * error bodies for our ApiErrors.
 */
import { ApiError, HTTP_STATUS, type ErrorCode } from "../../shared/protocol/errors";
import { openAIError, type OpenAIErrorBody } from "../../shared/openai/objects";

export interface ResponseSink {
  /** Status line and headers; once, before any write. */
  start(statusCode: number, headers: Record<string, string>): void;
  write(text: string): void;
  end(): Promise<void>;
}

export const JSON_HEADERS = { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" };
export const SSE_HEADERS = { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", "x-accel-buffering": "no" };

export async function sendJson(sink: ResponseSink, statusCode: number, body: unknown, headers: Record<string, string> = {}): Promise<void> {
  sink.start(statusCode, { ...JSON_HEADERS, ...headers });
  sink.write(JSON.stringify(body));
  await sink.end();
}

const ERROR_TYPES: Record<ErrorCode, string> = {
  INVALID_REQUEST: "invalid_request_error",
  UNAUTHORIZED: "authentication_error",
  FORBIDDEN: "permission_error",
  RATE_LIMITED: "rate_limit_error",
  NOT_FOUND: "not_found_error",
  PAYLOAD_TOO_LARGE: "invalid_request_error",
  IDEMPOTENCY_CONFLICT: "invalid_request_error",
  APPROVAL_CONFLICT: "invalid_request_error",
  UNKNOWN_METHOD: "not_found_error",
  SESSION_BUSY: "rate_limit_error",
  UNAVAILABLE: "server_error",
  TIMEOUT: "server_error",
  ABORTED: "server_error",
  INTERNAL: "server_error",
};

export function errorBody(error: ApiError): OpenAIErrorBody {
  const param = typeof error.details?.param === "string" ? error.details.param : null;
  const code = typeof error.details?.openaiCode === "string" ? error.details.openaiCode : error.code.toLowerCase();
  return openAIError(error.message, ERROR_TYPES[error.code], code, param);
}

/**
 * `x-should-retry: false` on everything but overload: the OpenAI SDK retries
 * 409/429/5xx by default, and a retry of a request whose run failed would
 * start another run.
 */
export function sendError(sink: ResponseSink, error: ApiError): Promise<void> {
  const retry: Record<string, string> = error.code === "SESSION_BUSY" ? {} : { "x-should-retry": "false" };
  return sendJson(sink, HTTP_STATUS[error.code], errorBody(error), retry);
}
