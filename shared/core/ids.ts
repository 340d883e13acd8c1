import { createHash, randomBytes } from "node:crypto";

/**
 * Run ids double as Step Functions execution names (<= 80 chars of
 * [A-Za-z0-9-_]) and SQS deduplication ids, so they are derived, not taken
 * verbatim from callers. A caller's idempotency key maps to the same run id
 * every time, which is what makes intake retries safe.
 */
export function runIdForIdempotencyKey(idempotencyKey: string): string {
  const digest = createHash("sha256").update(`agent:${idempotencyKey}`).digest("base64url");
  return `run_${digest.slice(0, 32)}`;
}

export function newRunId(): string {
  return `run_${randomBytes(16).toString("base64url")}`;
}

export function newSessionId(): string {
  return `ses_${randomBytes(12).toString("base64url")}`;
}

export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(9).toString("base64url")}`;
}

export function sha256Hex(value: string): string {
  return createHash("sha256").update(value).digest("hex");
}
