import { spawnSync } from "node:child_process";
import { pathToFileURL } from "node:url";

/** Wall time and CPU time (user + system) of one `import()`. */
export interface ImportSample {
  wallMs: number;
  cpuMs: number;
}

// Lambda's Node runtime provides the `awslambda` global (response streaming); a plain node process does not.
const RUNTIME_GLOBAL = "globalThis.awslambda??={streamifyResponse:(f)=>f,HttpResponseStream:{from:(s)=>s}};";

/**
 * `await import(bundle)` timed inside a fresh Node process with `environment`
 * on top of what Lambda sets: AWS_EXECUTION_ENV among it, without which the
 * tracer (on in the template) would not load. The bench's cold-start phase
 * and `bench/import-times.ts` both measure with this.
 */
export function importOnce(file: string, environment: Record<string, string>, sourceMaps: boolean): ImportSample {
  const script = `${RUNTIME_GLOBAL}const c=process.cpuUsage();const t=performance.now();await import(${JSON.stringify(pathToFileURL(file).href)});const w=performance.now()-t;const u=process.cpuUsage(c);process.stdout.write(w+" "+(u.user+u.system)/1000);`;
  const args = [...(sourceMaps ? ["--enable-source-maps"] : []), "--input-type=module", "-e", script];
  const out = spawnSync(process.execPath, args, {
    encoding: "utf8",
    env: { ...environment, PATH: process.env.PATH, AWS_REGION: "us-east-1", AWS_EXECUTION_ENV: "AWS_Lambda_nodejs22.x", AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true" },
  });
  if (out.status !== 0) throw new Error(`import of ${file} failed: ${out.stderr}`);
  const [wallMs, cpuMs] = out.stdout.trim().split(" ").map((n) => Math.round(Number(n) * 1000) / 1000);
  return { wallMs, cpuMs };
}
