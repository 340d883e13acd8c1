import { UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { Caller } from "../core/access";
import type { Db } from "../aws/dynamo";
import { epochSeconds, keys } from "../aws/keys";
import { ApiError } from "../protocol/errors";

/**
 * The per-key rate limit: a fixed one-minute window per key, one atomic ADD
 * per request (the item expires with its window). Stage throttling bounds
 * all callers together; this bounds each key, so one tenant cannot use the
 * whole stage budget. Over the limit: 429 RATE_LIMITED with `retryAfterMs`.
 */
export async function enforceRateLimit(db: Db, caller: Caller, defaultPerMinute: number): Promise<void> {
  const limit = caller.rateLimitPerMinute ?? defaultPerMinute;
  if (limit <= 0) return;
  const now = db.now();
  const minute = Math.floor(now / 60_000);
  const out = await db.doc.send(
    new UpdateCommand({
      TableName: db.table,
      Key: keys.rateWindow(caller.keyId, minute),
      UpdateExpression: "ADD requests :one SET expiresAt = if_not_exists(expiresAt, :ttl)",
      ExpressionAttributeValues: { ":one": 1, ":ttl": epochSeconds((minute + 2) * 60_000) },
      ReturnValues: "UPDATED_NEW",
    }),
  );
  if (Number(out.Attributes?.requests ?? 0) > limit) {
    throw new ApiError("RATE_LIMITED", `rate limit of ${limit} requests per minute for this key exceeded`, { limitPerMinute: limit, retryAfterMs: (minute + 1) * 60_000 - now });
  }
}
