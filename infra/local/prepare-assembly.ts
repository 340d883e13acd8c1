import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { resolveAgentConfig } from "../agent-config";
import { assemblyCacheKey, cachedAssembly, commitAssembly, COMPLETE_MARKER, stagingFolder, synthContext } from "./assembly-cache";
import type { Synthesized, SynthesizeOptions } from "./synthesize";
import type { LocalStackOptions } from "./stack";

const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** What choosing the assembly reads of the stack's options. */
export type AssemblyOptions = Pick<LocalStackOptions, "config" | "configFile" | "env" | "dataDir" | "synthInWorker">;

/**
 * The cloud assembly to deploy. With a data folder (npm start) it comes from
 * the assembly cache when nothing synthesis reads has changed, else it is
 * synthesized into the cache; without one (tests), into a temporary folder.
 */
export async function prepareAssembly(options: AssemblyOptions): Promise<Synthesized & { cached: boolean }> {
  const synthOptions: SynthesizeOptions = { config: options.config, configFile: options.configFile, env: options.env ?? process.env };
  const synthesize = (outdir?: string) => (options.synthInWorker ? synthesizeInWorker(synthOptions, outdir) : synthesizeInProcess(synthOptions, outdir));
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

function synthesizeInWorker(options: SynthesizeOptions, outdir?: string): Promise<Synthesized> {
  const worker = new Worker(new URL("./synth-worker.mjs", import.meta.url), {
    workerData: { config: options.config, configFile: options.configFile, env: { ...(options.env ?? process.env) }, ...(outdir ? { outdir } : {}) },
  });
  return new Promise<Synthesized>((resolve, reject) => {
    worker.once("message", (synthesized: Synthesized) => {
      resolve(synthesized);
      void worker.terminate();
    });
    worker.once("error", reject);
    worker.once("exit", (code) => code !== 0 && reject(new Error(`synthesis worker exited with ${code}`)));
  });
}

