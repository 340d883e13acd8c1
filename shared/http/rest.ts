import type { APIGatewayProxyEvent, APIGatewayProxyResult } from "aws-lambda";
import { ApiError, HTTP_STATUS } from "../protocol/errors";
import { MAX_MESSAGE_BYTES } from "../protocol/agent-request";

// Lives with the protocol (it speaks ApiError); re-exported for the handlers that import it from here.
export { validate } from "../protocol/validate";

/** JSON envelope around a message: a body past this cannot carry a valid message. */
export const MAX_BODY_BYTES = MAX_MESSAGE_BYTES + 16 * 1024;

export function json(statusCode: number, body: unknown): APIGatewayProxyResult {
  return {
    statusCode,
    headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" },
    body: JSON.stringify(body),
  };
}

export function errorResult(error: ApiError): APIGatewayProxyResult {
  return json(HTTP_STATUS[error.code], { error: error.toBody() });
}

/** Raw body -> JSON, with 413 for oversized bodies and 400 for malformed JSON. */
export function parseJsonBody(event: APIGatewayProxyEvent): unknown {
  const raw = event.isBase64Encoded && event.body ? Buffer.from(event.body, "base64").toString("utf8") : (event.body ?? "");
  if (Buffer.byteLength(raw, "utf8") > MAX_BODY_BYTES) {
    throw new ApiError("PAYLOAD_TOO_LARGE", `request body exceeds ${MAX_BODY_BYTES} bytes`);
  }
  if (raw.trim() === "") return {};
  try {
    return JSON.parse(raw);
  } catch {
    throw new ApiError("INVALID_REQUEST", "request body is not valid JSON");
  }
}

export function header(event: APIGatewayProxyEvent, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(event.headers ?? {})) {
    if (key.toLowerCase() === wanted && value !== undefined) return value;
  }
  return undefined;
}
