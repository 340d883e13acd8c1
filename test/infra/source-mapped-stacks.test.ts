/**
 * A bundled function's stack traces name its TypeScript sources without
 * Node's --enable-source-maps (which the template no longer sets): the
 * formatter infra/bundle.ts injects reads a file's map when a stack through
 * it is first formatted (shared/runtime/source-mapped-stacks.ts). Built with
 * the real bundler options, run in a fresh Node process without the flag.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BUNDLE_FILE, bundleFunctions } from "../../infra/bundle";
import { REPO_ROOT } from "../../infra/lambdas";

const FIXTURE = "test/fixtures/stack-traces";

describe("bundled functions map their stack traces themselves", () => {
  let cacheDir: string;
  let dir: string;

  beforeAll(() => {
    cacheDir = mkdtempSync(join(tmpdir(), "mapped-stacks-"));
    dir = bundleFunctions({ entries: { fixture: join(REPO_ROOT, FIXTURE, "handler.ts") }, pluginModules: [], cacheDir, projectRoot: REPO_ROOT }).fixture;
  }, 120_000);
  afterAll(() => rmSync(cacheDir, { recursive: true, force: true }));

  /** Imports the bundle in a fresh process (no --enable-source-maps), runs `body`, prints what it returns. */
  function inChild(body: string, before = ""): string {
    const script = `${before}const m=await import(${JSON.stringify(pathToFileURL(join(dir, BUNDLE_FILE)).href)});const out=await (async()=>{${body}})();process.stdout.write(String(out));`;
    const run = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8", env: { PATH: process.env.PATH } });
    expect(run.status, run.stderr).toBe(0);
    return run.stdout;
  }

  const stackOf = (event: string) => `try{await m.handler(${event});return "no error"}catch(e){return e.stack}`;

  it("a throw in a statically bundled module: frames at the TypeScript lines, V8's frame format kept", () => {
    const stack = inChild(stackOf("{}"));
    const lines = stack.split("\n");
    expect(lines[0]).toBe("Error: failed static");
    expect(lines[1]).toMatch(new RegExp(`^    at \\S+ \\(${FIXTURE}/deep\\.ts:2:\\d+\\)$`));
    expect(lines[2]).toMatch(new RegExp(`^    at \\S+ \\(${FIXTURE}/handler\\.ts:9:\\d+\\)$`));
    expect(stack).not.toContain(BUNDLE_FILE);
  });

  it("a throw in a lazily imported chunk: mapped through that chunk's own map", () => {
    const stack = inChild(stackOf("{lazy:true}"));
    expect(stack.split("\n")[0]).toBe("TypeError: lazy chunk failed");
    expect(stack).toMatch(new RegExp(`\\(${FIXTURE}/lazy\\.ts:3:\\d+\\)`));
    expect(stack).toMatch(new RegExp(`\\(${FIXTURE}/handler\\.ts:7:\\d+\\)`));
  });

  it("the maps are read when a stack is formatted, not at import: removed after the import, the frames stay the bundle's", () => {
    // In the child, after its import: every `.map` renamed to `.map.away`, and back once the stack is read.
    const rename = (from: string, to: string) =>
      `for(const f of fs.readdirSync(${JSON.stringify(dir)}).filter((f)=>f.endsWith(${JSON.stringify(from)})))fs.renameSync(${JSON.stringify(dir)}+"/"+f,${JSON.stringify(dir)}+"/"+f.slice(0,-${from.length})+${JSON.stringify(to)});`;
    const stack = inChild(`const fs=await import("node:fs");${rename(".map", ".map.away")}try{${stackOf("{}")}}finally{${rename(".map.away", ".map")}}`);
    expect(stack.split("\n")[1]).toMatch(new RegExp(`${BUNDLE_FILE}:\\d+:\\d+\\)$`));
    expect(stack).not.toContain(".ts:");
  });

  it("a formatter installed before the bundle (an APM agent's) keeps formatting", () => {
    const stack = inChild(stackOf("{}"), `Error.prepareStackTrace=(e)=>"theirs: "+e.message;`);
    expect(stack).toBe("theirs: failed static");
  });

  it("the maps carry positions and project-relative file names, not the sources' text", () => {
    const maps = readdirSync(dir).filter((file) => file.endsWith(".map"));
    expect(maps.length).toBeGreaterThanOrEqual(2);
    const sources: string[] = [];
    for (const file of maps) {
      const map = JSON.parse(readFileSync(join(dir, file), "utf8")) as { sources: string[]; sourcesContent?: unknown };
      expect(map.sourcesContent).toBeUndefined();
      sources.push(...map.sources);
    }
    for (const source of sources) expect(source).not.toMatch(/^\.\.\//);
    expect(sources).toEqual(expect.arrayContaining([`${FIXTURE}/handler.ts`, `${FIXTURE}/deep.ts`, `${FIXTURE}/lazy.ts`, "shared/runtime/source-mapped-stacks.ts"]));
  });
});
