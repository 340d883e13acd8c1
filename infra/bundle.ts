/**
 * The functions' code bundles, built with esbuild's JS API while the CDK app
 * is constructed (the same way NodejsFunction shells out to esbuild), and
 * cached by their inputs so an unchanged tree never rebundles.
 *
 * Why not NodejsFunction: it cannot add files next to the bundle (the
 * deployed configuration, the workspace), rebundles on every synth, and
 * with bundling switched off it ships a placeholder. Here the asset CDK
 * stages and `cdk deploy` uploads is exactly what `npm start` runs.
 *
 * Cache validity: every input esbuild read (its metafile) is recorded with
 * size and mtime; a cache entry is used only when all of them still match,
 * under a key made of the entry points, the plugin modules and the options.
 */
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { buildSync, version as esbuildVersion, type BuildOptions, type Metafile } from "esbuild";

/** Node subpath import the shared code loads plugins from (package.json `imports`). */
export const PLUGINS_IMPORT = "#agent-runner/plugins";

// ESM output still meets CommonJS dependencies that call `require`.
const ESM_REQUIRE_BANNER =
  "import { createRequire as __agentRunnerCreateRequire } from 'node:module';" +
  "const require = __agentRunnerCreateRequire(import.meta.url);";

export const BUNDLE_FILE = "index.mjs";

/**
 * Evaluated first in every function: maps stack traces through the bundle's source maps when one is
 * formatted, instead of Node's --enable-source-maps parsing them all at every cold start.
 */
const STACK_FORMATTER = "shared/runtime/install-source-mapped-stacks.ts";

/** Bumped when what build() writes besides esbuild's output changes (the maps' `sources`). */
const LAYOUT_VERSION = 1;

export interface BundleRequest {
  /** Output folder name -> entry file (absolute). */
  entries: Record<string, string>;
  /** Absolute paths of the plugin modules the configuration names (bundled in order). */
  pluginModules: readonly string[];
  /** Where the cache lives (one folder per cache key). */
  cacheDir: string;
  /** Where package.json and node_modules are. */
  projectRoot: string;
}

/** Output folder name -> absolute folder holding `index.mjs`, the chunks it imports lazily, and their source maps. */
export type BundleDirs = Record<string, string>;

interface CacheManifest {
  inputs: Record<string, { size: number; mtimeMs: number }>;
}

export function bundleFunctions(request: BundleRequest): BundleDirs {
  const options = buildOptions(request);
  const key = cacheKey(request, options);
  const dir = join(request.cacheDir, key);
  if (!isFresh(dir)) build(dir, request.entries, options, request.projectRoot);
  return Object.fromEntries(Object.keys(request.entries).map((name) => [name, join(dir, name)]));
}

function buildOptions(request: BundleRequest): BuildOptions {
  return {
    bundle: true,
    // Code behind a dynamic `import()` (the model SDKs, the MCP SDK, the tracer) goes to chunk files next
    // to index.mjs, so a function's cold start neither parses nor evaluates what it may never call. (Without
    // splitting, esbuild inlines such modules behind lazy initializers, which also breaks the initialization
    // order of modules imported both statically and dynamically, e.g. zod through the MCP SDK.)
    splitting: true,
    chunkNames: "chunk-[hash]",
    platform: "node",
    format: "esm",
    target: "node22",
    minify: true,
    // Maps for stack traces only: positions and file names, not the sources' text (the attempt's maps: 11 MB -> 2.7 MB).
    sourcemap: true,
    sourcesContent: false,
    inject: [join(request.projectRoot, STACK_FORMATTER)],
    outExtension: { ".js": ".mjs" },
    banner: { js: ESM_REQUIRE_BANNER },
    mainFields: ["module", "main"],
    // Ship the pinned @aws-sdk versions instead of whatever the runtime carries.
    external: [],
    alias: { [PLUGINS_IMPORT]: pluginsModulePath(request) },
    logLevel: "silent",
    metafile: true,
    absWorkingDir: request.projectRoot,
  };
}

/** The generated module behind `#agent-runner/plugins`: the configured plugins, imported statically. */
function pluginsModulePath(request: BundleRequest): string {
  const source = [
    ...request.pluginModules.map((file, index) => `import * as plugin${index} from ${JSON.stringify(file)};`),
    `export const BUNDLED_PLUGINS = [${request.pluginModules.map((_f, index) => `plugin${index}`).join(", ")}];`,
    "",
  ].join("\n");
  const digest = createHash("sha256").update(source).digest("hex").slice(0, 16);
  const dir = join(request.cacheDir, "plugins");
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `plugins-${digest}.mjs`);
  if (!existsSync(file)) writeAtomically(file, source);
  return file;
}

function cacheKey(request: BundleRequest, options: BuildOptions): string {
  const material = JSON.stringify({ esbuildVersion, layout: LAYOUT_VERSION, entries: request.entries, options: { ...options, absWorkingDir: resolve(request.projectRoot) }, plugins: request.pluginModules });
  return createHash("sha256").update(material).digest("hex").slice(0, 24);
}

function isFresh(dir: string): boolean {
  const manifestFile = join(dir, "inputs.json");
  if (!existsSync(manifestFile)) return false;
  try {
    const manifest = JSON.parse(readFileSync(manifestFile, "utf8")) as CacheManifest;
    return Object.entries(manifest.inputs).every(([file, seen]) => {
      const now = statSync(file, { throwIfNoEntry: false });
      return now !== undefined && now.size === seen.size && now.mtimeMs === seen.mtimeMs;
    });
  } catch {
    return false;
  }
}

/**
 * Builds into a temporary folder and renames it into place, so concurrent synths never see half a bundle.
 * One build per function: each folder then holds its own index.mjs and the chunks it imports, flat (the
 * folder is the function's asset), and no function carries another's code.
 */
function build(dir: string, entries: Record<string, string>, options: BuildOptions, projectRoot: string): void {
  const staging = `${dir}.tmp-${randomBytes(6).toString("hex")}`;
  try {
    const metafiles = Object.entries(entries).map(
      ([name, file]) => buildSync({ ...options, entryPoints: { index: file }, outdir: join(staging, name) }).metafile!,
    );
    for (const name of Object.keys(entries)) sourcesFromProjectRoot(join(staging, name), join(dir, name), projectRoot);
    writeFileSync(join(staging, "inputs.json"), JSON.stringify(inputsOf(metafiles, projectRoot)));
    rmSync(dir, { recursive: true, force: true });
    renameSync(staging, dir);
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    // Another synth may have finished the same bundle first: that one is as good.
    if (isFresh(dir)) return;
    throw error;
  }
}

/**
 * esbuild names each map's sources relative to the folder it built into (`../../../../../zod/...`), which
 * means nothing once the folder is a function's asset. Stack traces name them from the project root
 * instead: `functions/attempt/app.ts`, `node_modules/zod/...`. `finalDir` is where the folder will live
 * (the staging folder sits beside it, so the relative paths resolve the same from both).
 */
function sourcesFromProjectRoot(stagingDir: string, finalDir: string, projectRoot: string): void {
  for (const file of readdirSync(stagingDir).filter((name) => name.endsWith(".map"))) {
    const path = join(stagingDir, file);
    const map = JSON.parse(readFileSync(path, "utf8")) as { sources: string[] };
    map.sources = map.sources.map((source) => relative(projectRoot, resolve(finalDir, source)).split("\\").join("/"));
    writeFileSync(path, JSON.stringify(map));
  }
}

function inputsOf(metafiles: readonly Metafile[], projectRoot: string): CacheManifest {
  const inputs: CacheManifest["inputs"] = {};
  for (const input of new Set(metafiles.flatMap((metafile) => Object.keys(metafile.inputs)))) {
    const file = resolve(projectRoot, input.replace(/^[a-z-]+:/, ""));
    const stat = statSync(file, { throwIfNoEntry: false });
    if (stat) inputs[file] = { size: stat.size, mtimeMs: stat.mtimeMs };
  }
  // package.json carries the `imports` map and the lock file the dependency versions.
  for (const file of ["package.json", "package-lock.json"]) {
    const path = join(projectRoot, file);
    const stat = statSync(path, { throwIfNoEntry: false });
    if (stat) inputs[path] = { size: stat.size, mtimeMs: stat.mtimeMs };
  }
  return { inputs };
}

function writeAtomically(file: string, content: string): void {
  const temp = `${file}.tmp-${randomBytes(6).toString("hex")}`;
  writeFileSync(temp, content);
  renameSync(temp, file);
}
