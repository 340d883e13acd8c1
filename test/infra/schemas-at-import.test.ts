/**
 * Importing a function builds only the configuration's zod schemas
 * (issue 15, bundle import times). Every other module-level schema is a
 * `z.lazy`, built on its first parse: a WebSocket route's params, a record a
 * function never reads. The configuration schemas stay eager on purpose:
 * every function parses its configuration at its cold start
 * (docs/import-times.md).
 *
 * Counted in a fresh process through zod's global post-processor hook, which
 * zod calls once for every schema instance it constructs; each construction is
 * attributed to the first module on its stack outside zod.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { FUNCTION_SPECS } from "../../infra/functions";
import { REPO_ROOT } from "../../infra/lambdas";

/** Module (repo-relative) -> schema instances other than z.lazy wrappers it constructed while every given entry was imported. */
function schemasBuiltAtImport(entries: string[]): Record<string, number> {
  const imports = entries.map((entry) => `await import(${JSON.stringify(pathToFileURL(join(REPO_ROOT, entry)).href)});`).join("");
  const script = `
    const root = ${JSON.stringify(REPO_ROOT.replace(/\/?$/, "/"))};
    const counts = {};
    // Lambda's Node runtime provides the awslambda global (response streaming); a plain node process does not.
    globalThis.awslambda ??= { streamifyResponse: (f) => f, HttpResponseStream: { from: (s) => s } };
    Error.stackTraceLimit = 100;
    globalThis.__zod_globalConfig = { postProcessor(schema) {
      if (schema._zod.def.type === "lazy") return;
      const frames = new Error().stack.split("\\n").slice(1);
      const own = frames.map((line) => /\\((?:file:\\/\\/)?([^():]+):\\d+:\\d+\\)$|at (?:file:\\/\\/)?([^():]+):\\d+:\\d+$/.exec(line)).filter(Boolean).map((m) => m[1] ?? m[2]).find((file) => file.startsWith(root) && !file.includes("/node_modules/") && /\\.[cm]?[jt]s$/.test(file));
      const key = own ? own.slice(root.length) : "(outside the repo)";
      counts[key] = (counts[key] ?? 0) + 1;
    } };
    ${imports}
    process.stdout.write(JSON.stringify(counts));`;
  const out = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
    encoding: "utf8",
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH, AWS_REGION: "us-east-1", AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true", POWERTOOLS_TRACE_ENABLED: "false" },
  });
  expect(out.status, out.stderr).toBe(0);
  return JSON.parse(out.stdout) as Record<string, number>;
}

/** Modules outside shared/config whose schemas are built at import, and why. */
const EAGER_BY_DESIGN = new Set([
  // zod's mini build, for the authorizer, which parses this record on every call and has no other schema.
  "shared/aws/api-keys.ts",
]);

describe("schemas built when a function is imported", () => {
  const entries = Object.values(FUNCTION_SPECS).map((spec) => spec.entry);
  const built = schemasBuiltAtImport(entries);

  it("the hook sees the configuration schemas (the count works)", () => {
    expect(built["shared/config/config.ts"]).toBeGreaterThan(50);
    expect(built["shared/config/attempt-config.ts"]).toBeGreaterThan(50);
  });

  it("no module outside shared/config builds a schema at import, only z.lazy wrappers", () => {
    const eager = Object.entries(built).filter(([file]) => !file.startsWith("shared/config/") && !EAGER_BY_DESIGN.has(file));
    expect(Object.fromEntries(eager)).toEqual({});
  });
});
