import { mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { resolveAgentConfig } from "../../infra/agent-config";
import { assemblyCacheKey, cachedAssembly, commitAssembly, COMPLETE_MARKER, stagingFolder, synthContext } from "../../infra/local/assembly-cache";

const folders: string[] = [];
afterEach(() => {
  for (const dir of folders.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), "assembly-cache-test-"));
  folders.push(dir);
  return dir;
}

/** A stand-in repository: the source folders the key covers, one file each. */
function fakeRepo(): string {
  const root = scratch();
  for (const dir of ["infra", "infra/local", "shared", "functions/attempt"]) mkdirSync(join(root, dir), { recursive: true });
  writeFileSync(join(root, "infra/stack.ts"), "export {};\n");
  writeFileSync(join(root, "infra/local/main.ts"), "export {};\n");
  writeFileSync(join(root, "shared/x.ts"), "export const x = 1;\n");
  writeFileSync(join(root, "functions/attempt/handler.ts"), "export {};\n");
  writeFileSync(join(root, "package-lock.json"), "{}\n");
  return root;
}

const resolvedWith = (model: string) => resolveAgentConfig({ config: { model }, processEnv: {} });
const keyOf = (repoRoot: string, model = "offline/echo", configFile?: string) =>
  assemblyCacheKey({ repoRoot, resolved: resolvedWith(model), context: synthContext(configFile) });

describe("assembly cache key", () => {
  it("is the same for the same inputs", () => {
    const repo = fakeRepo();
    expect(keyOf(repo)).toBe(keyOf(repo));
  });

  it("changes when the configuration changes", () => {
    const repo = fakeRepo();
    expect(keyOf(repo, "offline/echo")).not.toBe(keyOf(repo, "openai/gpt-4o-mini"));
  });

  it("changes when the CDK context (the config file named) changes", () => {
    const repo = fakeRepo();
    expect(keyOf(repo, "offline/echo", "/a/agent-runner.config.json")).not.toBe(keyOf(repo, "offline/echo", "/b/agent-runner.config.json"));
  });

  it("changes when a source file of the app or of a function changes, is added or removed", () => {
    const repo = fakeRepo();
    const before = keyOf(repo);
    writeFileSync(join(repo, "shared/x.ts"), "export const x = 22;\n");
    const edited = keyOf(repo);
    expect(edited).not.toBe(before);
    writeFileSync(join(repo, "functions/attempt/extra.ts"), "export {};\n");
    const added = keyOf(repo);
    expect(added).not.toBe(edited);
    rmSync(join(repo, "functions/attempt/extra.ts"));
    expect(keyOf(repo)).toBe(edited);
  });

  it("changes when a file keeps its size but gets a new modification time", () => {
    const repo = fakeRepo();
    const before = keyOf(repo);
    utimesSync(join(repo, "infra/stack.ts"), new Date(2000, 0, 1), new Date(2000, 0, 1));
    expect(keyOf(repo)).not.toBe(before);
  });

  it("ignores the local deployer (infra/local is not part of the synthesized app)", () => {
    const repo = fakeRepo();
    const before = keyOf(repo);
    writeFileSync(join(repo, "infra/local/main.ts"), "export const changed = true;\n");
    expect(keyOf(repo)).toBe(before);
  });

  it("does not change with the provider API keys (they never reach the template)", () => {
    const repo = fakeRepo();
    const withKey = (apiKey: string) =>
      assemblyCacheKey({ repoRoot: repo, resolved: resolveAgentConfig({ config: { model: "openai/gpt-4o-mini" }, processEnv: { OPENAI_API_KEY: apiKey } }), context: synthContext(undefined) });
    expect(withKey("sk-one")).toBe(withKey("sk-two"));
  });
});

describe("assembly cache entries", () => {
  it("uses an entry only once it is complete, and keeps only the newest few", () => {
    const root = scratch();
    const staging = stagingFolder(root, "k1");
    mkdirSync(staging, { recursive: true });
    writeFileSync(join(staging, "manifest.json"), "{}");
    expect(cachedAssembly(root, "k1")).toBeUndefined();
    writeFileSync(join(staging, COMPLETE_MARKER), "{}");
    const dir = commitAssembly(root, "k1", staging);
    expect(cachedAssembly(root, "k1")).toBe(dir);
    for (const key of ["k2", "k3", "k4", "k5"]) {
      const next = stagingFolder(root, key);
      mkdirSync(next, { recursive: true });
      writeFileSync(join(next, COMPLETE_MARKER), "{}");
      commitAssembly(root, key, next);
    }
    expect(readdirSync(root).length).toBeLessThanOrEqual(4);
    expect(cachedAssembly(root, "k5")).toBeDefined();
  });

  it("a second writer of the same key keeps the first entry and drops its own staging folder", () => {
    const root = scratch();
    const first = stagingFolder(root, "k");
    const second = stagingFolder(root, "k");
    for (const dir of [first, second]) {
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, COMPLETE_MARKER), "{}");
    }
    const dir = commitAssembly(root, "k", first);
    expect(commitAssembly(root, "k", second)).toBe(dir);
    expect(readdirSync(root)).toEqual(["k"]);
  });
});
