import { randomBytes, randomUUID } from "node:crypto";

/**
 * API Gateway's WebSocket ids (connectionId, requestId, messageId,
 * extendedRequestId) look like `L0SM9cOFvHcCIhw=`: 16 characters of standard
 * base64 with one `=` of padding, i.e. 11 bytes. Keeping the alphabet
 * (`+`, `/`, `=`) catches callers that forget to URL-encode ids.
 */
export function newGatewayId(): string {
  return randomBytes(11).toString("base64");
}

/** REST API request ids are UUIDs. */
export function newRestRequestId(): string {
  return randomUUID();
}

const API_ID_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";

/** Like `a1b2c3d4e5`: ten lowercase alphanumerics. */
export function newApiId(): string {
  return Array.from(randomBytes(10), (byte) => API_ID_ALPHABET[byte % API_ID_ALPHABET.length]).join("");
}

/** X-Ray's format, which API Gateway adds as `X-Amzn-Trace-Id`. */
export function newTraceId(nowMs: number): string {
  const seconds = Math.floor(nowMs / 1000).toString(16).padStart(8, "0");
  return `Root=1-${seconds}-${randomBytes(12).toString("hex")}`;
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/** `requestContext.requestTime` uses the CLF format: `09/Apr/2015:12:34:56 +0000`. */
export function formatRequestTime(epochMs: number): string {
  const d = new Date(epochMs);
  const two = (n: number): string => String(n).padStart(2, "0");
  const date = `${two(d.getUTCDate())}/${MONTHS[d.getUTCMonth()]}/${d.getUTCFullYear()}`;
  return `${date}:${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())} +0000`;
}
