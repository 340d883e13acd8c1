/**
 * Import time of every function bundle, built from this tree exactly as the
 * stack builds it (`infra/bundle.ts`: ESM, minified, source map, no plugins
 * configured), each imported in a fresh Node process. Quicker than the
 * bench's cold-start phase (no synthesis): the before / after figure for
 * import-time cuts (issue 15: attempt <= 80 ms, the others <= 60 ms).
 *
 *   node --import tsx bench/import-times.ts [--repeats 5] [--only attempt,rest-api] [--top 12] [--untraced] [--keep]
 *
 * Imports run traced, as in Lambda and the bench's cold-start phase
 * (AWS_EXECUTION_ENV set); `--untraced` switches the Tracer off. `--keep`
 * leaves the bundles in their temporary folder (for a CPU profile).
 *
 * `--top N` also lists each bundle's N biggest packages (bytes in the
 * unsplit output, from esbuild's metafile). The table gives what the
 * import evaluates (index.mjs and the chunks it imports statically) and the
 * whole folder: what a dynamic `import()` reaches is in chunk files the
 * import neither parses nor evaluates.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { buildSync, type Metafile } from "esbuild";
import { BUNDLE_FILE, bundleFunctions, PLUGINS_IMPORT } from "../infra/bundle";
import { FUNCTION_KEYS, FUNCTION_SPECS, type FunctionKey } from "../infra/functions";
import { REPO_ROOT } from "../infra/lambdas";
import { importOnce } from "./import-once";
import { codeBytes, eagerBytes } from "./bundle-bytes";
import { summarize } from "./stats";

/** Tracing as in the template (on), or switched off as every local sandbox has it. */
const tracingEnv = (traced: boolean): Record<string, string> => (traced ? {} : { POWERTOOLS_TRACE_ENABLED: "false" });

/** Output bytes per package (node_modules/<pkg>, or "(own code)"), biggest first, and the lazily initialized share. */
function packageSizes(entry: string, noPlugins: string): { packages: [string, number][]; total: number } {
  const result = buildSync({
    entryPoints: [join(REPO_ROOT, entry)],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node22",
    minify: true,
    mainFields: ["module", "main"],
    outfile: "/nonexistent-out/index.mjs",
    write: false,
    metafile: true,
    logLevel: "silent",
    absWorkingDir: REPO_ROOT,
    alias: { [PLUGINS_IMPORT]: noPlugins },
  });
  const output = Object.values((result.metafile as Metafile).outputs)[0];
  const sizes = new Map<string, number>();
  for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
    const match = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input);
    const name = match ? match[1] : "(own code)";
    sizes.set(name, (sizes.get(name) ?? 0) + bytesInOutput);
  }
  return { packages: [...sizes].sort((a, b) => b[1] - a[1]), total: output.bytes };
}

const kb = (bytes: number) => `${Math.round(bytes / 1024)} KB`;

function main(): void {
  const { values } = parseArgs({ options: { repeats: { type: "string", default: "5" }, only: { type: "string" }, top: { type: "string" }, untraced: { type: "boolean", default: false }, keep: { type: "boolean", default: false } } });
  const repeats = Number(values.repeats);
  const keys = (values.only ? values.only.split(",") : [...FUNCTION_KEYS]) as FunctionKey[];
  const cacheDir = mkdtempSync(join(tmpdir(), "import-times-"));
  try {
    const entries = Object.fromEntries(keys.map((key) => [key, join(REPO_ROOT, FUNCTION_SPECS[key].entry)]));
    const dirs = bundleFunctions({ entries, pluginModules: [], cacheDir, projectRoot: REPO_ROOT });
    const noPlugins = join(cacheDir, "no-plugins.mjs");
    writeFileSync(noPlugins, "export const BUNDLED_PLUGINS = [];\n");
    const loadBefore = loadavg()[0];
    const rows: string[] = [];
    for (const key of keys) {
      const file = join(dirs[key], BUNDLE_FILE);
      importOnce(file, tracingEnv(!values.untraced), false); // warms the OS file cache; not counted
      const samples = Array.from({ length: repeats }, () => importOnce(file, tracingEnv(!values.untraced), false));
      const wall = summarize(samples.map((s) => s.wallMs));
      const cpu = summarize(samples.map((s) => s.cpuMs));
      rows.push(`| ${key} | ${kb(eagerBytes(dirs[key]))} | ${kb(codeBytes(dirs[key]))} | ${wall.median.toFixed(1)} ms | ${cpu.median.toFixed(1)} ms |`);
      if (values.top) {
        const { packages, total } = packageSizes(FUNCTION_SPECS[key].entry, noPlugins);
        const list = packages.slice(0, Number(values.top)).map(([name, bytes]) => `${name} ${Math.round(bytes / 1024)} KB`);
        console.error(`${key} (${Math.round(total / 1024)} KB): ${list.join(", ")}`);
      }
    }
    console.log(`Bundle import${values.untraced ? " (tracing off)" : " (traced)"}, median of ${repeats} fresh processes, load average ${loadBefore.toFixed(1)} -> ${loadavg()[0].toFixed(1)}, node ${process.version}`);
    console.log("| function | evaluated at import (index.mjs + static chunks) | whole folder (+ lazy chunks) | import wall | import CPU |");
    console.log("| --- | --- | --- | --- | --- |");
    for (const row of rows) console.log(row);
    if (values.keep) console.error(`bundles kept in ${cacheDir}`);
  } finally {
    if (!values.keep) rmSync(cacheDir, { recursive: true, force: true });
  }
}

main();
