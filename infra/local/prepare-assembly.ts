import { fork } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { resolveAgentConfig } from "../agent-config";
import { assemblyCacheKey, cachedAssembly, commitAssembly, COMPLETE_MARKER, stagingFolder, synthContext } from "./assembly-cache";
import type { SynthesisReply, SynthesisRequest } from "./synth-process";
import type { Synthesized, SynthesizeOptions } from "./synthesize";
import type { LocalStackOptions } from "./stack";

const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** What choosing the assembly reads of the stack's options. */
export type AssemblyOptions = Pick<LocalStackOptions, "config" | "configFile" | "env" | "dataDir" | "synthInChild">;

/**
 * The cloud assembly to deploy. With a data folder (npm start) it comes from
 * the assembly cache when nothing synthesis reads has changed, else it is
 * synthesized into the cache; without one (tests), into a temporary folder.
 */
export async function prepareAssembly(options: AssemblyOptions): Promise<Synthesized & { cached: boolean }> {
  const synthOptions: SynthesizeOptions = { config: options.config, configFile: options.configFile, env: options.env ?? process.env };
  const synthesize = (outdir?: string) => (options.synthInChild ? synthesizeInChild(synthOptions, outdir) : synthesizeInProcess(synthOptions, outdir));
  if (!options.dataDir) return { ...(await synthesize()), cached: false };
  const resolved = resolveAgentConfig({ config: options.config ?? options.configFile, processEnv: synthOptions.env });
  const cacheRoot = join(options.dataDir, "assembly-cache");
  const key = assemblyCacheKey({ repoRoot: REPO_ROOT, resolved, context: synthContext(options.configFile) });
  const hit = cachedAssembly(cacheRoot, key);
  if (hit) return { dir: hit, secretValues: resolved.secretValues, config: resolved.config, cached: true };
  const staging = stagingFolder(cacheRoot, key);
  try {
    const synthesized = await synthesize(staging);
    writeFileSync(join(staging, COMPLETE_MARKER), `${JSON.stringify({ key, synthesizedAt: new Date().toISOString() })}\n`);
    return { ...synthesized, dir: commitAssembly(cacheRoot, key, staging), cached: true };
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    throw error;
  }
}

/** In this thread (tests): aws-cdk-lib is loaded only here, on first use. */
async function synthesizeInProcess(options: SynthesizeOptions, outdir?: string): Promise<Synthesized> {
  const { synthesizeAssembly } = await import("./synthesize");
  return synthesizeAssembly(options, outdir);
}

/**
 * In a child process (npm start): what aws-cdk-lib allocates leaves with the
 * process (infra/local/synth-process.ts). No loader flags are passed on (the
 * entry registers tsx itself), so a parent started under a profiler or an
 * inspector does not start its child under it too.
 */
function synthesizeInChild(options: SynthesizeOptions, outdir?: string): Promise<Synthesized> {
  const child = fork(fileURLToPath(new URL("./synth-process.mjs", import.meta.url)), [], { execArgv: [], stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const request: SynthesisRequest = { options: { ...options, env: { ...(options.env ?? process.env) } }, ...(outdir ? { outdir } : {}) };
  return new Promise<Synthesized>((resolve, reject) => {
    let replied = false;
    child.once("message", (reply: SynthesisReply) => {
      replied = true;
      if (reply.ok) resolve(reply.synthesized);
      else reject(Object.assign(new Error(`synthesis failed: ${reply.message}`), reply.stack ? { stack: reply.stack } : {}));
    });
    child.once("error", reject);
    child.once("exit", (code, signal) => {
      if (!replied) reject(new Error(`synthesis process exited (${signal ?? code}) without an assembly`));
    });
    child.send(request);
  });
}
