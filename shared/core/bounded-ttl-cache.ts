/**
 * A per-container cache whose entries expire and whose size is capped: a
 * Lambda container lives for hours and a module-scope Map that only ever
 * grows is a leak (e.g. one entry per distinct bearer token ever presented,
 * most of them wrong). Expired entries are dropped when they are read and
 * when the cache is full; past the cap the oldest entry goes first (a Map
 * iterates in insertion order).
 */
export class BoundedTtlCache<K, V> {
  private readonly entries = new Map<K, { value: V; until: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries: number,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  get(key: K, now: number): V | undefined {
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    if (hit.until > now) return hit.value;
    this.entries.delete(key);
    return undefined;
  }

  /** True when the key has a live entry (its value may be undefined: a cached miss). */
  has(key: K, now: number): boolean {
    const hit = this.entries.get(key);
    return hit !== undefined && hit.until > now;
  }

  set(key: K, value: V, now: number): void {
    this.entries.delete(key);
    if (this.entries.size >= this.maxEntries) this.evict(now);
    this.entries.set(key, { value, until: now + this.ttlMs });
  }

  clear(): void {
    this.entries.clear();
  }

  private evict(now: number): void {
    for (const [key, entry] of this.entries) if (entry.until <= now) this.entries.delete(key);
    while (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done) return;
      this.entries.delete(oldest.value);
    }
  }
}
