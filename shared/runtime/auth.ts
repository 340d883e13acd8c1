import { timingSafeEqual } from "node:crypto";
import { sha256Hex } from "../core/ids";
import { findApiKey } from "../aws/api-keys";
import type { Db } from "../aws/dynamo";

/** The deployment's token (its digest in AUTH_TOKEN_SHA256), or an API key stored in the table. */
export async function authenticate(db: Db, presented: string | undefined, expectedSha256: string | undefined): Promise<boolean> {
  if (!presented) return false;
  if (tokenMatches(presented, expectedSha256)) return true;
  return (await findApiKey(db, presented)) !== undefined;
}

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
