import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { FunctionPool } from "../../infra/local/lambda/pool";
import { testFunction } from "../support/function-pool";
import { until } from "../support/until";

const codeDir = mkdtempSync(join(tmpdir(), "reaping-fn-"));
writeFileSync(join(codeDir, "index.mjs"), "let calls = 0;\nexport const handler = async () => ({ calls: ++calls });\n");
afterAll(() => rmSync(codeDir, { recursive: true, force: true }));

function pool(idleMs: number): FunctionPool {
  return new FunctionPool(
    testFunction("reaping-fn", codeDir),
    () => undefined,
    idleMs,
  );
}

describe("idle sandboxes", () => {
  it("are stopped after the idle time, and the next invocation gets a fresh (cold) sandbox", async () => {
    // Prepare
    const fn = pool(50);
    try {
      // Act
      const first = await fn.invoke<{ calls: number }>({});
      await until(async () => (fn.sandboxCount() === 0 ? true : undefined), "the idle sandbox to be reaped");
      const second = await fn.invoke<{ calls: number }>({});
      // Assess: module state did not survive, so the second call ran in a new sandbox
      expect(first.calls).toBe(1);
      expect(second.calls).toBe(1);
      expect(fn.coldStarts).toBe(2);
    } finally {
      await fn.close();
    }
  });

  it("stay warm while invocations keep coming within the idle time", async () => {
    // Prepare: an idle time no test run on a loaded machine reaches between back-to-back calls
    const fn = pool(600_000);
    try {
      // Act
      const results = [];
      for (let i = 0; i < 3; i += 1) results.push(await fn.invoke<{ calls: number }>({}));
      // Assess
      expect(results.map((r) => r.calls)).toEqual([1, 2, 3]);
      expect(fn.coldStarts).toBe(1);
      expect(fn.sandboxCount()).toBe(1);
    } finally {
      await fn.close();
    }
  });
});
