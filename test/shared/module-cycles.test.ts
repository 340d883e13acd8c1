import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * The folders of shared/ form layers: no two of them import each other,
 * directly or through others (STYLE.md: small ports, one seam per concern).
 * Type-only imports count too: a cycle of types is a cycle of concepts.
 */
const ROOT = resolve(__dirname, "../../shared");

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : path.endsWith(".ts") ? [path] : [];
  });
}

function folderOf(path: string): string {
  return relative(ROOT, path).split("/")[0];
}

function folderGraph(): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const file of files(ROOT)) {
    const from = folderOf(file);
    const edges = graph.get(from) ?? new Set<string>();
    graph.set(from, edges);
    for (const match of readFileSync(file, "utf8").matchAll(/from\s+"(\.{1,2}\/[^"]+)"/g)) {
      const target = resolve(dirname(file), match[1]);
      if (!target.startsWith(ROOT)) continue;
      const to = folderOf(target);
      if (to !== from) edges.add(to);
    }
  }
  return graph;
}

/** Every folder cycle, as the path that closes it (e.g. run -> lanes -> run). */
function cycles(graph: Map<string, Set<string>>): string[] {
  const found = new Set<string>();
  const visit = (node: string, path: string[]) => {
    for (const next of graph.get(node) ?? []) {
      const at = path.indexOf(next);
      if (at >= 0) {
        const loop = path.slice(at);
        const start = loop.indexOf([...loop].sort()[0]);
        found.add([...loop.slice(start), ...loop.slice(0, start), loop[start]].join(" -> "));
      } else if (path.length < 12) visit(next, [...path, next]);
    }
  };
  for (const node of graph.keys()) visit(node, [node]);
  return [...found].sort();
}

describe("module layering of shared/", () => {
  const all = cycles(folderGraph());

  it("run and lanes do not import each other (RunDeps lives in ports/, the sweeper above both)", () => {
    expect(all.filter((c) => c.includes("lanes") && c.includes("run"))).toEqual([]);
  });

  it("http and protocol do not import each other (validate lives in protocol/)", () => {
    expect(all.filter((c) => c.includes("http") && c.includes("protocol"))).toEqual([]);
  });

  it("lists the folder cycles that remain", () => {
    console.log(all.length ? `folder cycles left:\n${all.join("\n")}` : "no folder cycles");
    expect(Array.isArray(all)).toBe(true);
  });
});

/**
 * Each folder of functions/ is one Lambda's thin handler: logic two of them
 * need lives in shared/, so no function folder imports another's.
 */
const FUNCTIONS = resolve(__dirname, "../../functions");

function crossFunctionImports(): string[] {
  const found: string[] = [];
  for (const file of files(FUNCTIONS)) {
    const from = relative(FUNCTIONS, file).split("/")[0];
    for (const match of readFileSync(file, "utf8").matchAll(/from\s+"(\.{1,2}\/[^"]+)"/g)) {
      const target = resolve(dirname(file), match[1]);
      if (!target.startsWith(FUNCTIONS)) continue;
      const to = relative(FUNCTIONS, target).split("/")[0];
      if (to !== from) found.push(`${relative(FUNCTIONS, file)} -> ${match[1]}`);
    }
  }
  return found;
}

describe("module layering of functions/", () => {
  it("no function folder imports another (shared logic such as admitRestCaller lives in shared/)", () => {
    expect(crossFunctionImports()).toEqual([]);
  });
});
