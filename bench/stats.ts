/** Summary statistics the report uses. Percentiles are nearest-rank (no interpolation). */

export interface Summary {
  n: number;
  median: number;
  p95: number;
  mean: number;
  min: number;
  max: number;
}

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

export function summarize(values: readonly number[]): Summary {
  const n = values.length;
  return {
    n,
    median: percentile(values, 50),
    p95: percentile(values, 95),
    mean: n ? values.reduce((sum, v) => sum + v, 0) / n : Number.NaN,
    min: n ? Math.min(...values) : Number.NaN,
    max: n ? Math.max(...values) : Number.NaN,
  };
}

/** Jain's fairness index: 1 when every share is equal, 1/n when one party gets everything. */
export function jainIndex(shares: readonly number[]): number {
  if (shares.length === 0) return Number.NaN;
  const sum = shares.reduce((a, b) => a + b, 0);
  const squares = shares.reduce((a, b) => a + b * b, 0);
  return squares === 0 ? 1 : (sum * sum) / (shares.length * squares);
}
