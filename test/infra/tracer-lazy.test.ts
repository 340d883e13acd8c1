/**
 * The X-Ray SDK under the Powertools tracer is evaluated only when tracing
 * can be on (shared/observability/tracer.ts): with POWERTOOLS_TRACE_ENABLED
 * false (every local sandbox) a function's bundle imports without it, and
 * without the async hooks it installs. cls-hooked, which it loads, marks
 * itself on `process.namespaces`.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BUNDLE_FILE, bundleFunctions } from "../../infra/bundle";
import { REPO_ROOT } from "../../infra/lambdas";
import { tracingOffIn } from "../../shared/observability/tracer";

describe("the tracer is loaded only when tracing is on", () => {
  let cacheDir: string;
  let bundle: string;

  beforeAll(() => {
    cacheDir = mkdtempSync(join(tmpdir(), "tracer-lazy-"));
    const dirs = bundleFunctions({ entries: { authorizer: join(REPO_ROOT, "functions/authorizer/handler.ts") }, pluginModules: [], cacheDir, projectRoot: REPO_ROOT });
    bundle = join(dirs.authorizer, BUNDLE_FILE);
  }, 180_000);
  afterAll(() => rmSync(cacheDir, { recursive: true, force: true }));

  /** Imports the bundle in a fresh Node process and answers whether cls-hooked (X-Ray's context) was loaded. */
  function xrayLoaded(traceEnabled: string, extra: Record<string, string> = { AWS_EXECUTION_ENV: LAMBDA_ENV }): boolean {
    const script = `await import(${JSON.stringify(pathToFileURL(bundle).href)});process.stdout.write(String(process.namespaces!==undefined));`;
    const out = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
      encoding: "utf8",
      env: { PATH: process.env.PATH, AWS_REGION: "us-east-1", AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true", POWERTOOLS_TRACE_ENABLED: traceEnabled, ...extra },
    });
    expect(out.status, out.stderr).toBe(0);
    return out.stdout.trim() === "true";
  }

  it("POWERTOOLS_TRACE_ENABLED=false: the bundle imports without the X-Ray SDK", () => {
    expect(xrayLoaded("false")).toBe(false);
  });

  it("POWERTOOLS_TRACE_ENABLED=true in Lambda (the template's default in AWS): the X-Ray SDK is loaded", () => {
    expect(xrayLoaded("true")).toBe(true);
  });

  it("POWERTOOLS_TRACE_ENABLED=true outside Lambda (no AWS_EXECUTION_ENV), where the Tracer would switch itself off: not loaded", () => {
    expect(xrayLoaded("true", {})).toBe(false);
  });
});

const LAMBDA_ENV = "AWS_Lambda_nodejs22.x";

describe("where the tracer is off", () => {
  it.each([
    [{ AWS_EXECUTION_ENV: LAMBDA_ENV }, false],
    [{ AWS_EXECUTION_ENV: LAMBDA_ENV, POWERTOOLS_TRACE_ENABLED: "true" }, false],
    [{ AWS_EXECUTION_ENV: LAMBDA_ENV, POWERTOOLS_TRACE_ENABLED: " Off " }, true],
    [{ AWS_EXECUTION_ENV: LAMBDA_ENV, POWERTOOLS_TRACE_ENABLED: "0" }, true],
    [{}, true],
    [{ POWERTOOLS_TRACE_ENABLED: "true" }, true],
    [{ AWS_EXECUTION_ENV: "AWS_Lambda_amplify-mock" }, true],
    [{ AWS_EXECUTION_ENV: LAMBDA_ENV, AWS_SAM_LOCAL: "true" }, true],
  ])("%j -> off: %s", (env, off) => {
    expect(tracingOffIn(env)).toBe(off);
  });

  it("the local stack's main process (it builds admin deps from the functions' code) never loads the X-Ray SDK", () => {
    const script = `await import(${JSON.stringify(pathToFileURL(join(REPO_ROOT, "infra/local/stack.ts")).href)});process.stdout.write(String(process.namespaces!==undefined));`;
    const env: NodeJS.ProcessEnv = { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true" };
    delete env.AWS_EXECUTION_ENV;
    delete env.POWERTOOLS_TRACE_ENABLED;
    const out = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { encoding: "utf8", env, cwd: REPO_ROOT });
    expect(out.status, out.stderr).toBe(0);
    expect(out.stdout.trim()).toBe("false");
  }, 60_000);
});
