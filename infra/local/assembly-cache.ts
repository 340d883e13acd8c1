/**
 * The synthesized cloud assembly, cached under the data folder by the hash of
 * everything synthesis reads, so a restart of `npm start` with nothing
 * changed deploys the cached assembly without loading the CDK at all.
 *
 * The key covers: the resolved configuration without its secret values (file
 * or object, environment overrides, plugin modules and the workspace by size
 * and mtime), the CDK
 * context, and every source file of the app and of the functions (infra/
 * outside infra/local, shared/, functions/, console/, package.json,
 * package-lock.json, cdk.json, tsconfig.json) by path, size and mtime. A
 * change to any of them is a new key: the next start synthesizes again.
 * Entries are written to a staging folder and renamed into place; only the
 * newest few are kept.
 */
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, type Stats } from "node:fs";
import { join, relative } from "node:path";
import type { ResolvedAgentConfig } from "../agent-config";

/** Sources synthesis reads (relative to the repository root); infra/local is the deployer, not the app. */
const SOURCE_ROOTS = ["infra", "shared", "functions", "console"];
const SOURCE_FILES = ["package.json", "package-lock.json", "cdk.json", "tsconfig.json"];
const EXCLUDED = new Set(["infra/local", "node_modules", ".data"]);
/** Cache entries kept besides the one in use (older ones are removed). */
const KEEP_ENTRIES = 3;
/** Written last into an entry: an entry without it is incomplete and never used. */
export const COMPLETE_MARKER = "agent-runner-assembly.json";

/** The CDK context of a local synthesis: the same feature flags as `cdk synth` (cdk.json), plus the config file. */
export function synthContext(configFile: string | undefined): Record<string, unknown> {
  const context: Record<string, unknown> = { "@aws-cdk/core:stackRelativeExports": true };
  if (configFile) context.config = configFile;
  return context;
}

export interface AssemblyKeyInput {
  repoRoot: string;
  resolved: ResolvedAgentConfig;
  context: Record<string, unknown>;
}

export function assemblyCacheKey(input: AssemblyKeyInput): string {
  const hash = createHash("sha256");
  // The secret-free part only: keys never reach the template, so a new key is no reason to synthesize again.
  const { deployed, configFile, pluginModules, workspaceDir } = input.resolved;
  hash.update(JSON.stringify({ deployed, configFile, pluginModules, workspaceDir, context: input.context, node: process.versions.node }));
  for (const file of input.resolved.pluginModules) hash.update(fingerprint(file));
  if (input.resolved.workspaceDir) for (const file of walk(input.resolved.workspaceDir)) hash.update(fingerprint(file));
  for (const file of sourceFiles(input.repoRoot)) hash.update(`${relative(input.repoRoot, file)}\0${fingerprintStats(file)}`);
  return hash.digest("hex").slice(0, 24);
}

/** The cached assembly folder for a key, when a complete one is there. */
export function cachedAssembly(cacheRoot: string, key: string): string | undefined {
  const dir = join(cacheRoot, key);
  return existsSync(join(dir, COMPLETE_MARKER)) ? dir : undefined;
}

/** A fresh staging folder to synthesize into; `commit` moves it into place as the key's entry. */
export function stagingFolder(cacheRoot: string, key: string): string {
  mkdirSync(cacheRoot, { recursive: true });
  return join(cacheRoot, `${key}.tmp-${randomBytes(6).toString("hex")}`);
}

/** Moves a synthesized staging folder into place (the marker is written by the caller first) and drops old entries. */
export function commitAssembly(cacheRoot: string, key: string, staging: string): string {
  const dir = join(cacheRoot, key);
  if (existsSync(join(dir, COMPLETE_MARKER))) {
    // Another start finished the same key first: that one is as good.
    rmSync(staging, { recursive: true, force: true });
  } else {
    rmSync(dir, { recursive: true, force: true });
    renameSync(staging, dir);
  }
  pruneEntries(cacheRoot, key);
  return dir;
}

function pruneEntries(cacheRoot: string, current: string): void {
  const entries = readdirSync(cacheRoot, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && entry.name !== current && !entry.name.includes(".tmp-"))
    .map((entry) => ({ name: entry.name, mtimeMs: statSync(join(cacheRoot, entry.name)).mtimeMs }))
    .sort((a, b) => b.mtimeMs - a.mtimeMs);
  for (const old of entries.slice(KEEP_ENTRIES)) rmSync(join(cacheRoot, old.name), { recursive: true, force: true });
}

function sourceFiles(repoRoot: string): string[] {
  const files = SOURCE_ROOTS.flatMap((root) => walk(join(repoRoot, root), repoRoot));
  for (const file of SOURCE_FILES) if (existsSync(join(repoRoot, file))) files.push(join(repoRoot, file));
  return files.sort();
}

function walk(dir: string, repoRoot?: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (repoRoot && EXCLUDED.has(relative(repoRoot, full))) continue;
    if (entry.isDirectory()) out.push(...walk(full, repoRoot));
    else if (entry.isFile()) out.push(full);
  }
  return out.sort();
}

function fingerprint(file: string): string {
  return `${file}\0${fingerprintStats(file)}`;
}

function fingerprintStats(file: string): string {
  const stat: Stats | undefined = statSync(file, { throwIfNoEntry: false });
  return stat ? `${stat.size}:${stat.mtimeMs}` : "missing";
}
