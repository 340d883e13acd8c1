import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { FunctionPool } from "../../infra/local/lambda/pool";

/**
 * Lambda runs a sandbox's init phase (importing the handler module) before
 * the invocation's timeout starts. A cold start on a busy machine must not
 * turn into `Task timed out`; a handler that overruns still does.
 */
const codeDir = mkdtempSync(join(tmpdir(), "init-phase-fn-"));
// The module's import outlasts the 2 s timeout; the handler answers at once, or never.
writeFileSync(
  join(codeDir, "index.mjs"),
  "await new Promise((resolve) => setTimeout(resolve, 3000));\n" +
    "export const quick = async () => ({ ok: true });\n" +
    "export const never = () => new Promise(() => undefined);\n",
);
afterAll(() => rmSync(codeDir, { recursive: true, force: true }));

function pool(handler: string): FunctionPool {
  return new FunctionPool(
    {
      name: "init-phase-fn",
      arn: "arn:aws:lambda:us-east-1:000000000000:function:init-phase-fn",
      codeDir,
      handler,
      timeoutSeconds: 2,
      memoryMb: 128,
      environment: { LAMBDA_TASK_ROOT: codeDir, _HANDLER: handler, AWS_REGION: "us-east-1" },
      maxConcurrency: 1,
    },
    () => undefined,
  );
}

describe("the init phase", () => {
  it("does not count against the invocation's timeout", async () => {
    const fn = pool("index.quick");
    try {
      await expect(fn.invoke<{ ok: boolean }>({})).resolves.toEqual({ ok: true });
    } finally {
      await fn.close();
    }
  });

  it("a handler that outlives its timeout is still stopped with Lambda's message", async () => {
    const fn = pool("index.never");
    try {
      await expect(fn.invoke({})).rejects.toMatchObject({ message: expect.stringContaining("Task timed out after 2.00 seconds") });
    } finally {
      await fn.close();
    }
  });
});
