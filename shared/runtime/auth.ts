import { timingSafeEqual } from "node:crypto";
import { DEFAULT_TENANT, type Caller } from "../core/access";
import { sha256Hex } from "../core/ids";
import { callerOfKey, findApiKey } from "../aws/api-keys";
import type { Db } from "../aws/dynamo";

/** The deployment's own token acts as the default tenant's admin. */
export const DEPLOYMENT_TOKEN_CALLER: Caller = { tenantId: DEFAULT_TENANT, keyId: "key_deployment", keyName: "deployment token", scopes: ["operator.admin"] };

/** Who presents this key: the deployment's token (its digest in AUTH_TOKEN_SHA256), or an API key stored in the table. */
export async function authenticateCaller(db: Db, presented: string | undefined, expectedSha256: string | undefined): Promise<Caller | undefined> {
  if (!presented) return undefined;
  if (tokenMatches(presented, expectedSha256)) return DEPLOYMENT_TOKEN_CALLER;
  const record = await findApiKey(db, presented);
  return record ? callerOfKey(record) : undefined;
}

export async function authenticate(db: Db, presented: string | undefined, expectedSha256: string | undefined): Promise<boolean> {
  return (await authenticateCaller(db, presented, expectedSha256)) !== undefined;
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
