import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { BUNDLE_FILE } from "../infra/bundle";

/**
 * What a function's folder holds (infra/bundle.ts splits each function's
 * code): index.mjs, the chunks it imports statically, and the chunks only a
 * dynamic `import()` reaches, which a cold start neither parses nor evaluates.
 */

/** index.mjs and the chunks it reaches through static imports: what `import()` of the bundle parses and evaluates. */
export function eagerBytes(dir: string): number {
  const seen = new Set<string>();
  const pending = [BUNDLE_FILE];
  while (pending.length > 0) {
    const file = pending.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    // Static imports only (`from"./chunk-X.mjs"`, `import"./chunk-X.mjs"`); `import("./chunk-X.mjs")` is lazy.
    for (const match of readFileSync(join(dir, file), "utf8").matchAll(/(?:from|import)\s*"\.\/(chunk-[A-Z0-9]+\.mjs)"/g)) pending.push(match[1]);
  }
  return [...seen].reduce((sum, file) => sum + statSync(join(dir, file)).size, 0);
}

/** index.mjs and every chunk next to it (source maps left out). */
export function codeBytes(dir: string): number {
  return readdirSync(dir)
    .filter((file) => file.endsWith(".mjs"))
    .reduce((sum, file) => sum + statSync(join(dir, file)).size, 0);
}
