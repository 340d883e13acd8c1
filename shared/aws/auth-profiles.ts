import { GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import * as z from "zod";
import { keys, prefixes } from "./keys";
import { conditionally, type Db } from "./dynamo";
import { queryItems } from "./query-pages";
import { FAILURE_KINDS, type FailureKind } from "../core/failures";
import { HEALTHY, recordProfileFailure, type ProfileHealth } from "../core/auth-cooldown";

/**
 * Auth-profile health in DynamoDB, one item per provider credential, shared by
 * every run (a profile on cooldown is skipped by all of them). The cooldown
 * arithmetic is pure (core/auth-cooldown); this file only reads and writes.
 *
 * Concurrent failures of one profile: read the item, compute, put it back IF
 * its revision is still the one read (optimistic; no transactions). A lost
 * race re-reads and re-applies, so no failure is dropped.
 */
export const ProfileHealthItemSchema = z.lazy(() => z.object({
  v: z.literal(1),
  provider: z.string(),
  profileId: z.string(),
  rev: z.number().int().min(0),
  errorCount: z.number().int().min(0),
  lastFailureAt: z.number().optional(),
  lastFailureReason: z.enum(FAILURE_KINDS).optional(),
  cooldownUntil: z.number().optional(),
  cooldownModel: z.string().optional(),
  disabledUntil: z.number().optional(),
  disabledReason: z.enum(["billing", "auth_permanent"]).optional(),
  billingFailures: z.number().int().min(0),
  authPermanentFailures: z.number().int().min(0),
}));
type ProfileHealthItem = z.infer<typeof ProfileHealthItemSchema>;

const MAX_RACE_RETRIES = 5;

/** Health of every profile of a provider that ever failed (one Query). */
export async function readProfileHealth(db: Db, provider: string): Promise<Map<string, ProfileHealth>> {
  const items = await queryItems(db, {
    KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
    ExpressionAttributeValues: { ":pk": keys.authProfile(provider, "").pk, ":prefix": prefixes.authProfile },
    ConsistentRead: true,
  });
  const health = new Map<string, ProfileHealth>();
  for (const item of items) {
    const parsed = parseItem(item);
    health.set(parsed.profileId, toHealth(parsed));
  }
  return health;
}

export async function markProfileFailure(db: Db, provider: string, profileId: string, reason: FailureKind, model: string): Promise<ProfileHealth> {
  for (let round = 0; ; round += 1) {
    const current = await readOne(db, provider, profileId);
    const next = recordProfileFailure(current ? toHealth(current) : undefined, reason, model, db.now());
    const item: ProfileHealthItem = { v: 1, provider, profileId, rev: (current?.rev ?? 0) + 1, ...next };
    if (await putIfUnchanged(db, item, current?.rev)) return next;
    if (round >= MAX_RACE_RETRIES) throw new Error(`profile ${provider}/${profileId}: too many concurrent health updates`);
  }
}

/** A success clears the error streak (only written when there was one, so clean runs pay nothing). */
export async function markProfileGood(db: Db, provider: string, profileId: string, known: ProfileHealth | undefined): Promise<void> {
  if (!known || (known.errorCount === 0 && known.cooldownUntil === undefined)) return;
  const current = await readOne(db, provider, profileId);
  if (!current) return;
  const cleared: ProfileHealthItem = { ...current, rev: current.rev + 1, errorCount: 0, cooldownUntil: undefined, cooldownModel: undefined };
  await putIfUnchanged(db, cleared, current.rev);
}

async function readOne(db: Db, provider: string, profileId: string): Promise<ProfileHealthItem | undefined> {
  const out = await db.doc.send(new GetCommand({ TableName: db.table, Key: keys.authProfile(provider, profileId), ConsistentRead: true }));
  return out.Item ? parseItem(out.Item) : undefined;
}

async function putIfUnchanged(db: Db, item: ProfileHealthItem, expectedRev: number | undefined): Promise<boolean> {
  return conditionally(() =>
    db.doc.send(
      new PutCommand({
        TableName: db.table,
        Item: { ...keys.authProfile(item.provider, item.profileId), ...ProfileHealthItemSchema.parse(item) },
        ConditionExpression: expectedRev === undefined ? "attribute_not_exists(pk)" : "rev = :rev",
        ...(expectedRev === undefined ? {} : { ExpressionAttributeValues: { ":rev": expectedRev } }),
      }),
    ),
  );
}

function parseItem(item: Record<string, unknown>): ProfileHealthItem {
  const { pk: _pk, sk: _sk, ...rest } = item;
  return ProfileHealthItemSchema.parse(rest);
}

function toHealth(item: ProfileHealthItem): ProfileHealth {
  const { v: _v, provider: _p, profileId: _id, rev: _rev, ...health } = item;
  return { ...HEALTHY, ...health };
}
