import type { FunctionDefinition } from "../../infra/local/lambda/pool";

/** A plain function definition for pool tests: `index.handler` in `codeDir`, 30 s, 128 MB, 4 sandboxes at most. */
export function testFunction(name: string, codeDir: string): FunctionDefinition {
  return {
    name,
    arn: `arn:aws:lambda:us-east-1:000000000000:function:${name}`,
    codeDir,
    handler: "index.handler",
    timeoutSeconds: 30,
    memoryMb: 128,
    environment: { LAMBDA_TASK_ROOT: codeDir, _HANDLER: "index.handler", AWS_REGION: "us-east-1" },
    maxConcurrency: 4,
  };
}
