/**
 * Figure 4: cold start. Every function's bundle is taken from the
 * synthesized cloud assembly (the asset `cdk deploy` uploads and `npm start`
 * runs: the assembly cache under the bench's data folder, synthesized when
 * missing, or `BENCH_ASSEMBLY=<dir>`, e.g. `npm run synth`'s cdk.out), then
 * imported in a fresh Node process with the function's template environment,
 * as deployed and, for comparison, with Node's --enable-source-maps (which
 * the functions no longer set: shared/runtime/source-mapped-stacks.ts).
 * Import time is the module-init part of a cold start: the handlers build
 * their clients lazily, on the first invocation.
 */
import { readdirSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FunctionKey } from "../../infra/functions";
import { functionKeysByLogicalId } from "../../infra/function-keys";
import { loadAssembly, type LoadedAssembly } from "../../infra/local/deploy/assembly";
import { prepareAssembly } from "../../infra/local/prepare-assembly";
import { importOnce } from "../import-once";
import { summarize, type Summary } from "../stats";
import { codeBytes, eagerBytes } from "../bundle-bytes";

export type BundleResult = BundleMeasured | { key: FunctionKey; error: string };

export interface BundleMeasured {
  key: FunctionKey;
  /** index.mjs and the chunks it imports statically: what a cold start parses and evaluates. */
  evaluatedBytes: number;
  /** Every chunk in the function's folder, the lazily imported ones too (source maps left out). */
  codeBytes: number;
  sourceMapBytes: number;
  importMs: Summary;
  /** CPU time (user + system) of the same imports: on a loaded machine, what the import itself cost. */
  importCpuMs?: Summary;
  importMsWithSourceMaps: Summary;
  samples: { importMs: number[]; importCpuMs?: number[]; importMsWithSourceMaps: number[] };
}

/** The bench's own data folder: its assembly cache survives between bench runs, like `npm start`'s. */
const BENCH_DATA_DIR = join(tmpdir(), "agent-runner-bench-data");

export async function measureColdStart(options: { repeats: number }): Promise<BundleResult[]> {
  const assembly = loadAssembly(process.env.BENCH_ASSEMBLY ?? (await prepareAssembly({ dataDir: BENCH_DATA_DIR, synthInChild: true })).dir);
  const results: BundleResult[] = [];
  for (const fn of assemblyFunctions(assembly)) {
    const outfile = join(fn.codeDir, "index.mjs");
    const plain: number[] = [];
    const cpu: number[] = [];
    const withMaps: number[] = [];
    try {
      importOnce(outfile, fn.environment, false); // warms the OS file cache; not counted
      for (let i = 0; i < options.repeats; i += 1) {
        const once = importOnce(outfile, fn.environment, false);
        plain.push(once.wallMs);
        cpu.push(once.cpuMs);
        withMaps.push(importOnce(outfile, fn.environment, true).wallMs);
      }
    } catch (error) {
      // Recorded, not thrown: one function must not hide the others' figures.
      results.push({ key: fn.key, error: error instanceof Error ? error.message.split("\n")[0] : String(error) });
      continue;
    }
    results.push({
      key: fn.key,
      evaluatedBytes: eagerBytes(fn.codeDir),
      codeBytes: codeBytes(fn.codeDir),
      sourceMapBytes: mapBytes(fn.codeDir),
      importMs: summarize(plain),
      importCpuMs: summarize(cpu),
      importMsWithSourceMaps: summarize(withMaps),
      samples: { importMs: plain, importCpuMs: cpu, importMsWithSourceMaps: withMaps },
    });
  }
  return results;
}

/** Every source map in the folder (index.mjs's and its chunks'). */
function mapBytes(dir: string): number {
  return readdirSync(dir)
    .filter((file) => file.endsWith(".map"))
    .reduce((sum, file) => sum + statSync(join(dir, file)).size, 0);
}

interface AssemblyFunction {
  key: FunctionKey;
  codeDir: string;
  /** The template's environment variables that are plain strings (tokens resolve only at deploy). */
  environment: Record<string, string>;
}

/** Every Lambda function of the assembly's template with its asset folder. */
export function assemblyFunctions(assembly: LoadedAssembly): AssemblyFunction[] {
  const keys = functionKeysByLogicalId(assembly.template);
  const resources = (assembly.template.Resources ?? {}) as Record<string, { Type: string; Properties?: Record<string, unknown> }>;
  return Object.entries(keys).map(([logicalId, key]) => {
    const properties = resources[logicalId].Properties ?? {};
    const s3Key = (properties.Code as { S3Key?: string } | undefined)?.S3Key ?? "";
    const codeDir = assembly.assetDirs.get(s3Key) ?? assembly.assetDirs.get(s3Key.replace(/\.zip$/, ""));
    if (!codeDir) throw new Error(`bench: function ${key} has no asset in ${assembly.dir}`);
    const variables = ((properties.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {}) as Record<string, unknown>;
    // Exactly the template's variables (a NODE_OPTIONS among them would count, as it would in Lambda).
    const environment = Object.fromEntries(Object.entries(variables).filter((entry): entry is [string, string] => typeof entry[1] === "string"));
    return { key: key as FunctionKey, codeDir, environment };
  });
}
