import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  signStandardWebhook,
  slackSignature,
  standardWebhookSignature,
  verifySlackSignature,
  verifyStandardWebhook,
  verifyTelegramSecret,
} from "../../shared/channels/signatures";

const NOW = 1_700_000_000_000;
const body = Buffer.from('{"text":"hi","from":"a"}');

describe("Standard Webhooks", () => {
  // The standard's published example: secret, id, timestamp and payload -> this signature.
  it("matches the specification's test vector", () => {
    const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const payload = '{"test": 2432232314}';
    expect(standardWebhookSignature(secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", "1614265330", payload)).toBe("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
  });

  it("accepts its own signature, a rotated list, and refuses tampering, a wrong key and a stale or future timestamp", () => {
    const secret = `whsec_${Buffer.from("k".repeat(24)).toString("base64")}`;
    const signed = signStandardWebhook(secret, "msg_1", body.toString(), NOW);
    const headers = { id: signed["webhook-id"], timestamp: signed["webhook-timestamp"], signature: signed["webhook-signature"] };
    expect(verifyStandardWebhook(secret, headers, body, NOW)).toBe(true);
    expect(verifyStandardWebhook(secret, { ...headers, signature: `v1,AAAA ${headers.signature}` }, body, NOW)).toBe(true);
    expect(verifyStandardWebhook(secret, headers, Buffer.from(`${body} `), NOW)).toBe(false);
    expect(verifyStandardWebhook(`whsec_${Buffer.from("other").toString("base64")}`, headers, body, NOW)).toBe(false);
    expect(verifyStandardWebhook(secret, headers, body, NOW + 5 * 60_000 + 1000)).toBe(false);
    expect(verifyStandardWebhook(secret, headers, body, NOW - 5 * 60_000 - 1000)).toBe(false);
    expect(verifyStandardWebhook(secret, { ...headers, id: "msg_2" }, body, NOW)).toBe(false);
    expect(verifyStandardWebhook("", headers, body, NOW)).toBe(false);
  });
});

describe("Slack", () => {
  it("is v0= hex HMAC-SHA256 over v0:<timestamp>:<body>, within 5 minutes", () => {
    const ts = String(NOW / 1000);
    const expected = `v0=${createHmac("sha256", "s3cret").update(`v0:${ts}:${body}`).digest("hex")}`;
    expect(slackSignature("s3cret", ts, body)).toBe(expected);
    expect(verifySlackSignature("s3cret", { timestamp: ts, signature: expected }, body, NOW)).toBe(true);
    expect(verifySlackSignature("s3cret", { timestamp: ts, signature: expected }, body, NOW + 301_000)).toBe(false);
    expect(verifySlackSignature("other", { timestamp: ts, signature: expected }, body, NOW)).toBe(false);
    expect(verifySlackSignature("s3cret", { timestamp: "abc", signature: expected }, body, NOW)).toBe(false);
    expect(verifySlackSignature("s3cret", { timestamp: ts }, body, NOW)).toBe(false);
  });
});

describe("Telegram", () => {
  it("compares the secret token exactly; an account without a secret accepts nothing", () => {
    expect(verifyTelegramSecret("abc", "abc")).toBe(true);
    expect(verifyTelegramSecret("abc", "abd")).toBe(false);
    expect(verifyTelegramSecret("abc", "abcd")).toBe(false);
    expect(verifyTelegramSecret("abc", undefined)).toBe(false);
    expect(verifyTelegramSecret("", "")).toBe(false);
  });
});
