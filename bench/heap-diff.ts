/**
 * What grew between two V8 heap snapshots (bench/mem-probe.ts --snapshots):
 * self size and count per constructor / node name, largest growth first.
 *
 *   node --import tsx bench/heap-diff.ts /tmp/snap/warm.heapsnapshot /tmp/snap/after.heapsnapshot [top]
 */
import { readFileSync } from "node:fs";

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
  nodes: number[];
  strings: string[];
}

type Totals = Map<string, { size: number; count: number }>;

function totalsOf(file: string): Totals {
  const snap = JSON.parse(readFileSync(file, "utf8")) as Snapshot;
  const fields = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0];
  const width = fields.length;
  const typeAt = fields.indexOf("type");
  const nameAt = fields.indexOf("name");
  const sizeAt = fields.indexOf("self_size");
  const totals: Totals = new Map();
  for (let i = 0; i < snap.nodes.length; i += width) {
    const type = types[snap.nodes[i + typeAt]];
    const name = type === "object" || type === "native" ? snap.strings[snap.nodes[i + nameAt]] : `(${type})`;
    const key = `${type}:${name.slice(0, 80)}`;
    const entry = totals.get(key) ?? { size: 0, count: 0 };
    entry.size += snap.nodes[i + sizeAt];
    entry.count += 1;
    totals.set(key, entry);
  }
  return totals;
}

const [beforeFile, afterFile, top = "30"] = process.argv.slice(2);
const before = totalsOf(beforeFile);
const after = totalsOf(afterFile);
const rows = [...after].map(([key, a]) => {
  const b = before.get(key) ?? { size: 0, count: 0 };
  return { key, dSize: a.size - b.size, dCount: a.count - b.count, size: a.size };
});
rows.sort((x, y) => y.dSize - x.dSize);
for (const row of rows.slice(0, Number(top))) {
  console.log(`${(row.dSize / 1024).toFixed(1).padStart(9)} KB ${String(row.dCount).padStart(7)}  ${row.key}  (now ${(row.size / 1024).toFixed(0)} KB)`);
}
