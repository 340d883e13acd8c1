import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { FunctionPool, sandboxResourceLimits } from "../../infra/local/lambda/pool";

// A function that leaks on purpose: each invocation keeps 1 MB in module scope
// (what a cache keyed by run id would do), so the probe must see it.
const codeDir = mkdtempSync(join(tmpdir(), "diagnostics-fn-"));
writeFileSync(
  join(codeDir, "index.mjs"),
  "class KeptPerInvocation { constructor() { this.bytes = new Array(131072).fill(1.5); } }\nconst kept = [];\nexport const handler = async (event) => { if (event.leak) kept.push(new KeptPerInvocation()); return { kept: kept.length }; };\n",
);
const snapshotDir = mkdtempSync(join(tmpdir(), "diagnostics-snap-"));
afterAll(() => {
  rmSync(codeDir, { recursive: true, force: true });
  rmSync(snapshotDir, { recursive: true, force: true });
});

function pool(): FunctionPool {
  return new FunctionPool(
    {
      name: "diagnostics-fn",
      arn: "arn:aws:lambda:us-east-1:000000000000:function:diagnostics-fn",
      codeDir,
      handler: "index.handler",
      timeoutSeconds: 30,
      memoryMb: 256,
      environment: { LAMBDA_TASK_ROOT: codeDir, _HANDLER: "index.handler", AWS_REGION: "us-east-1" },
      maxConcurrency: 1,
    },
    () => undefined,
    600_000,
  );
}

describe("sandbox memory diagnostics (docs/local-memory.md)", () => {
  it("report the live heap after a GC and the invocations served, so a per-invocation leak shows", async () => {
    const fn = pool();
    try {
      for (let i = 0; i < 5; i += 1) await fn.invoke({ leak: false });
      const [clean] = await fn.idleHeaps({ gc: true });
      for (let i = 0; i < 20; i += 1) await fn.invoke({ leak: true });
      const [leaky] = await fn.idleHeaps({ gc: true });
      expect(clean.invocations).toBe(5);
      expect(leaky.invocations).toBe(25);
      // 20 invocations kept 20 MB: far above anything a GC leaves behind by chance.
      expect(leaky.heapUsed - clean.heapUsed).toBeGreaterThan(15 * 1048576);
    } finally {
      await fn.close();
    }
  }, 120_000);

  it("write a heap snapshot inside the sandbox that names what was kept", async () => {
    const fn = pool();
    try {
      for (let i = 0; i < 3; i += 1) await fn.invoke({ leak: true });
      const files = await fn.snapshotIdle(join(snapshotDir, "fn"));
      expect(files).toHaveLength(1);
      const snapshot = JSON.parse(readFileSync(files[0], "utf8")) as { strings: string[] };
      expect(snapshot.strings).toContain("KeptPerInvocation");
    } finally {
      await fn.close();
    }
  }, 120_000);
});

describe("sandbox V8 limits", () => {
  it("give the old generation the function's MemorySize and cap the young generation only when asked", () => {
    expect(sandboxResourceLimits(512, {})).toEqual({ maxOldGenerationSizeMb: 512 });
    expect(sandboxResourceLimits(32, {})).toEqual({ maxOldGenerationSizeMb: 64 });
    expect(sandboxResourceLimits(512, { LOCAL_SANDBOX_YOUNG_GENERATION_MB: "8" })).toEqual({ maxOldGenerationSizeMb: 512, maxYoungGenerationSizeMb: 8 });
    expect(sandboxResourceLimits(512, { LOCAL_SANDBOX_YOUNG_GENERATION_MB: "nope" })).toEqual({ maxOldGenerationSizeMb: 512 });
  });
});
