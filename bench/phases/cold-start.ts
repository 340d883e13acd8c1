/**
 * Figure 4: cold start. Every function is bundled exactly as the stack
 * bundles it (infra/bundle.ts: esm, minified, source maps, nothing
 * external), then imported in a fresh Node
 * process, with and without --enable-source-maps (the deployed functions set
 * it in NODE_OPTIONS). Import time is the module-init part of a cold start:
 * the handlers build their clients lazily, on the first invocation.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { FUNCTION_SPECS, type FunctionKey } from "../../infra/functions";
import { bundleFunctions } from "../../infra/bundle";
import { REPO_ROOT } from "../../infra/lambdas";
import { summarize, type Summary } from "../stats";

export type BundleResult = BundleMeasured | { key: FunctionKey; error: string };

export interface BundleMeasured {
  key: FunctionKey;
  bundleBytes: number;
  sourceMapBytes: number;
  importMs: Summary;
  importMsWithSourceMaps: Summary;
  samples: { importMs: number[]; importMsWithSourceMaps: number[] };
}

export async function measureColdStart(options: { repeats: number }): Promise<BundleResult[]> {
  const outDir = mkdtempSync(join(tmpdir(), "agent-runner-bundles-"));
  try {
    const results: BundleResult[] = [];
    for (const spec of Object.values(FUNCTION_SPECS)) {
      let outfile: string;
      try {
        // The very bundles the stack ships (infra/bundle.ts), built fresh into a scratch cache.
        const dirs = bundleFunctions({ entries: { [spec.key]: join(REPO_ROOT, spec.entry) }, pluginModules: [], cacheDir: outDir, projectRoot: REPO_ROOT });
        outfile = join(dirs[spec.key], "index.mjs");
      } catch (error) {
        // Recorded, not thrown: one function that does not bundle must not hide the others' figures.
        results.push({ key: spec.key, error: error instanceof Error ? error.message.split("\n")[0] : String(error) });
        continue;
      }
      const plain: number[] = [];
      const withMaps: number[] = [];
      try {
        importOnce(outfile, false); // warms the OS file cache; not counted
        for (let i = 0; i < options.repeats; i += 1) {
          plain.push(importOnce(outfile, false));
          withMaps.push(importOnce(outfile, true));
        }
      } catch (error) {
        // Recorded like a bundling failure: one function must not hide the others' figures.
        results.push({ key: spec.key, error: error instanceof Error ? error.message.split("\n")[0] : String(error) });
        continue;
      }
      results.push({
        key: spec.key,
        bundleBytes: statSync(outfile).size,
        sourceMapBytes: statSync(`${outfile}.map`).size,
        importMs: summarize(plain),
        importMsWithSourceMaps: summarize(withMaps),
        samples: { importMs: plain, importMsWithSourceMaps: withMaps },
      });
    }
    return results;
  } finally {
    rmSync(outDir, { recursive: true, force: true });
  }
}

/** Time to `import()` the bundle, measured inside a fresh Node process. */
function importOnce(file: string, sourceMaps: boolean): number {
  // Lambda's Node runtime provides the `awslambda` global (response streaming); a plain node process does not.
  const runtimeGlobal = "globalThis.awslambda??={streamifyResponse:(f)=>f,HttpResponseStream:{from:(s)=>s}};";
  const script = `${runtimeGlobal}const t=performance.now();await import(${JSON.stringify(pathToFileURL(file).href)});process.stdout.write(String(performance.now()-t));`;
  const args = [...(sourceMaps ? ["--enable-source-maps"] : []), "--input-type=module", "-e", script];
  const out = spawnSync(process.execPath, args, {
    encoding: "utf8",
    env: { PATH: process.env.PATH, AWS_REGION: "us-east-1", AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true" },
  });
  if (out.status !== 0) throw new Error(`import of ${file} failed: ${out.stderr}`);
  return Math.round(Number(out.stdout) * 1000) / 1000;
}
