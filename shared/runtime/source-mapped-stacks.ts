/**
 * Stack traces of the bundled functions name the TypeScript sources, without
 * Node's `--enable-source-maps`. That flag reads and parses the map of every
 * module as it loads, so every cold start paid for maps that only an error's
 * stack ever needs (60 to 100 ms of the attempt's import, BENCHMARKS.md figure
 * 4). Here a bundle file's map is read the first time a stack passing through
 * that file is formatted, then kept: the cost moves from every cold start to
 * the first formatted error of a container. V8 formats `error.stack` lazily,
 * on first access, so errors nobody prints cost nothing either.
 *
 * Frames keep V8's text (`    at fn (file:line:col)`), so Powertools'
 * error `location` and X-Ray's stack parsing read them as before; only the
 * location is swapped for the original one. A frame without a map (Node's
 * internals, a file built elsewhere) stays as V8 wrote it.
 */
import { readFileSync } from "node:fs";
import { SourceMap } from "node:module";
import { fileURLToPath } from "node:url";

/** Bundle file (as V8 names it) -> its parsed map, or null when it has none. */
const maps = new Map<string, SourceMap | null>();
let formatting = false;

/**
 * Installs the formatter unless one is installed already (an APM agent's,
 * preloaded through NODE_OPTIONS): that one keeps the stacks it formats.
 * Node's own default counts as none: in Node 20 and later `Error.prepareStackTrace`
 * is a function of Node's (`ErrorPrepareStackTrace`) until someone sets it.
 */
export function installSourceMappedStacks(): void {
  const current = Error.prepareStackTrace;
  if (current === undefined || current.name === NODE_DEFAULT_FORMATTER) Error.prepareStackTrace = formatStack;
}

const NODE_DEFAULT_FORMATTER = "ErrorPrepareStackTrace";

function formatStack(error: Error, sites: NodeJS.CallSite[]): string {
  // Reading a map can fail and format an error of its own: that one is not mapped.
  if (formatting) return stackText(error, sites, String);
  formatting = true;
  try {
    return stackText(error, sites, mappedFrame);
  } finally {
    formatting = false;
  }
}

function stackText(error: Error, sites: NodeJS.CallSite[], frame: (site: NodeJS.CallSite) => string): string {
  return [headerOf(error), ...sites.map((site) => `    at ${frame(site)}`)].join("\n");
}

/** What V8 puts first: `Name: message`. */
function headerOf(error: Error): string {
  try {
    return Error.prototype.toString.call(error);
  } catch {
    return "<error>";
  }
}

function mappedFrame(site: NodeJS.CallSite): string {
  const text = String(site);
  const file = site.getFileName();
  const line = site.getLineNumber();
  const column = site.getColumnNumber();
  if (!file || !line || !column) return text;
  const origin = originOf(file, line, column);
  if (!origin) return text;
  const generated = `${file}:${line}:${column}`;
  const at = text.lastIndexOf(generated);
  return at < 0 ? text : `${text.slice(0, at)}${origin}${text.slice(at + generated.length)}`;
}

function originOf(file: string, line: number, column: number): string | undefined {
  const map = mapOf(file);
  if (!map) return undefined;
  const entry = map.findEntry(line - 1, column - 1);
  if (!("originalSource" in entry) || !entry.originalSource) return undefined;
  return `${entry.originalSource}:${entry.originalLine + 1}:${entry.originalColumn + 1}`;
}

function mapOf(file: string): SourceMap | null {
  let map = maps.get(file);
  if (map === undefined) {
    map = readMap(file);
    maps.set(file, map);
  }
  return map;
}

/** The bundler writes each file's map beside it (`index.mjs` -> `index.mjs.map`). */
function readMap(file: string): SourceMap | null {
  if (!/\.[cm]?js$/.test(file) || !(file.startsWith("file:") || file.startsWith("/"))) return null;
  try {
    const path = file.startsWith("file:") ? fileURLToPath(file) : file;
    return new SourceMap(JSON.parse(readFileSync(`${path}.map`, "utf8")));
  } catch {
    return null;
  }
}
