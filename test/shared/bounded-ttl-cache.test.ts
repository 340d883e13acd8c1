import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BoundedTtlCache } from "../../shared/core/bounded-ttl-cache";
import { AUTH_CACHE_MAX_KEYS, AUTH_CACHE_MS, apiKeyCacheSize, createApiKey, findApiKey } from "../../shared/aws/api-keys";
import { startTestDb, type TestDb } from "../support/local-db";

describe("a per-container cache stays bounded (issue 16: no heap growth per invocation)", () => {
  it("drops expired entries and, past its cap, the oldest", () => {
    const cache = new BoundedTtlCache<string, number>(1_000, 3);
    cache.set("a", 1, 0);
    cache.set("b", 2, 0);
    expect(cache.get("a", 999)).toBe(1);
    expect(cache.get("a", 1_000)).toBeUndefined();
    expect(cache.size).toBe(1);
    cache.set("c", 3, 10);
    cache.set("d", 4, 20);
    cache.set("e", 5, 30);
    expect(cache.size).toBe(3);
    expect(cache.get("b", 30)).toBeUndefined();
    expect([cache.get("c", 30), cache.get("d", 30), cache.get("e", 30)]).toEqual([3, 4, 5]);
  });

  it("remembers a cached miss without asking again", () => {
    const cache = new BoundedTtlCache<string, number | undefined>(1_000, 3);
    cache.set("unknown", undefined, 0);
    expect(cache.has("unknown", 10)).toBe(true);
    expect(cache.has("unknown", 1_000)).toBe(false);
  });
});

describe("the API key lookup cache", () => {
  let t: TestDb;
  beforeAll(async () => {
    t = await startTestDb();
  });
  afterAll(async () => t?.close());

  it("holds at most AUTH_CACHE_MAX_KEYS keys however many distinct tokens are presented", async () => {
    const { key } = await createApiKey(t.db, { tenantId: "t1", name: "real", scopes: ["operator.read"] });
    expect((await findApiKey(t.db, key))?.tenantId).toBe("t1");
    for (let i = 0; i < AUTH_CACHE_MAX_KEYS + 200; i += 1) {
      expect(await findApiKey(t.db, `not-a-key-${i}`)).toBeUndefined();
    }
    expect(apiKeyCacheSize()).toBeLessThanOrEqual(AUTH_CACHE_MAX_KEYS);
    // The real key still answers (from the table once its entry was pushed out).
    expect((await findApiKey(t.db, key))?.tenantId).toBe("t1");
    expect(AUTH_CACHE_MS).toBeGreaterThan(0);
  }, 120_000);
});
