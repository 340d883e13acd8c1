import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * Inbound signature checks, each in constant time, before anything is
 * parsed or written (issue 13 "Inbound" 1):
 * - Telegram: the `secret_token` of setWebhook echoed in X-Telegram-Bot-Api-Secret-Token;
 * - Slack: `v0=` + hex HMAC-SHA256 over `v0:<timestamp>:<raw body>`, timestamp within 5 minutes;
 * - Standard Webhooks: `v1,<base64 HMAC-SHA256 over "id.timestamp.body">` with the
 *   key `whsec_<base64>`, timestamp within 5 minutes; the header may list several signatures.
 */
export const SIGNATURE_TOLERANCE_SECONDS = 5 * 60;

function equalConstantTime(a: string, b: string): boolean {
  const left = Buffer.from(a, "utf8");
  const right = Buffer.from(b, "utf8");
  // timingSafeEqual needs equal lengths; comparing against itself keeps the time independent of where they differ.
  if (left.length !== right.length) {
    timingSafeEqual(left, left);
    return false;
  }
  return timingSafeEqual(left, right);
}

function fresh(timestampSeconds: string | undefined, nowMs: number): boolean {
  if (!timestampSeconds || !/^\d{1,12}$/.test(timestampSeconds)) return false;
  return Math.abs(nowMs / 1000 - Number(timestampSeconds)) <= SIGNATURE_TOLERANCE_SECONDS;
}

export function verifyTelegramSecret(expected: string, given: string | undefined): boolean {
  if (!expected || given === undefined) return false;
  return equalConstantTime(expected, given);
}

export function slackSignature(signingSecret: string, timestamp: string, rawBody: Buffer): string {
  const mac = createHmac("sha256", signingSecret).update(`v0:${timestamp}:`).update(rawBody).digest("hex");
  return `v0=${mac}`;
}

export function verifySlackSignature(signingSecret: string, headers: { timestamp?: string; signature?: string }, rawBody: Buffer, nowMs: number): boolean {
  if (!signingSecret || !headers.signature || !fresh(headers.timestamp, nowMs)) return false;
  return equalConstantTime(slackSignature(signingSecret, headers.timestamp!, rawBody), headers.signature);
}

/** `whsec_<base64>` -> key bytes; a secret without the prefix is taken as base64 too (the standard's libraries do). */
function webhookKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith("whsec_") ? secret.slice("whsec_".length) : secret, "base64");
}

export function standardWebhookSignature(secret: string, id: string, timestamp: string, body: Buffer | string): string {
  const mac = createHmac("sha256", webhookKey(secret)).update(`${id}.${timestamp}.`).update(body).digest("base64");
  return `v1,${mac}`;
}

export interface StandardWebhookHeaders {
  id?: string;
  timestamp?: string;
  signature?: string;
}

export function verifyStandardWebhook(secret: string, headers: StandardWebhookHeaders, rawBody: Buffer, nowMs: number): boolean {
  if (!secret || !headers.id || !headers.signature || !fresh(headers.timestamp, nowMs)) return false;
  const expected = standardWebhookSignature(secret, headers.id, headers.timestamp!, rawBody);
  // Space-separated list (key rotation); check every v1 entry so the time does not reveal which one matched.
  let matched = false;
  for (const candidate of headers.signature.split(" ")) {
    if (candidate.startsWith("v1,") && equalConstantTime(expected, candidate)) matched = true;
  }
  return matched;
}

/** Headers of an outbound Standard Webhooks request (the reply to `replyUrl`). */
export function signStandardWebhook(secret: string, id: string, body: string, nowMs: number): Record<string, string> {
  const timestamp = String(Math.floor(nowMs / 1000));
  return { "webhook-id": id, "webhook-timestamp": timestamp, "webhook-signature": standardWebhookSignature(secret, id, timestamp, body) };
}
