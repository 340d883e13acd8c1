import { timingSafeEqual } from "node:crypto";
import { sha256Hex } from "../core/ids";

/**
 * Bearer-token check against the configured SHA-256 of the token (the
 * plaintext never sits in configuration). Constant-time comparison.
 */
export function tokenMatches(presented: string | undefined, expectedSha256: string | undefined): boolean {
  if (!presented || !expectedSha256) return false;
  const actual = Buffer.from(sha256Hex(presented), "hex");
  const expected = Buffer.from(expectedSha256, "hex");
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

export function bearerToken(authorization: string | undefined): string | undefined {
  const match = /^Bearer\s+(.+)$/i.exec(authorization ?? "");
  return match?.[1]?.trim();
}
