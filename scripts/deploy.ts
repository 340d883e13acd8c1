/**
 * `npm run deploy [-- <cdk deploy flags, e.g. -c model=openai/gpt-4.1-mini>]`:
 * checks that the account/region is bootstrapped for CDK, deploys the stack,
 * then says which secret to fill and prints a curl to try.
 * `npm run deploy:localstack` does the same through `cdklocal` (LocalStack;
 * see docs/localstack-and-sam.md for which parts need its paid plan).
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { CloudFormationClient, DescribeStacksCommand } from "@aws-sdk/client-cloudformation";

const BOOTSTRAP_STACK = "CDKToolkit";
const OUTPUTS_FILE = "cdk.out/deploy-outputs.json";

async function main(): Promise<void> {
  const localstack = process.argv.includes("--localstack");
  const passThrough = process.argv.slice(2).filter((arg) => arg !== "--localstack");
  const cli = localstack ? ["cdklocal"] : ["cdk"];
  if (!(await bootstrapped(localstack))) {
    process.stderr.write(`This account/region is not bootstrapped for CDK. Run once:\n  npx ${cli[0]} bootstrap\nthen npm run deploy${localstack ? ":localstack" : ""} again.\n`);
    process.exit(2);
  }
  const result = spawnSync("npx", [...cli, "deploy", "--require-approval", "never", "--outputs-file", OUTPUTS_FILE, ...passThrough], { stdio: "inherit", env: process.env });
  if (result.status !== 0) process.exit(result.status ?? 1);
  printNextSteps();
}

async function bootstrapped(localstack: boolean): Promise<boolean> {
  const client = new CloudFormationClient(localstack ? { endpoint: process.env.AWS_ENDPOINT_URL ?? "http://localhost:4566" } : {});
  try {
    const out = await client.send(new DescribeStacksCommand({ StackName: BOOTSTRAP_STACK }));
    return (out.Stacks ?? []).some((stack) => !String(stack.StackStatus).startsWith("DELETE"));
  } catch (error) {
    if (/does not exist/.test(String((error as Error).message))) return false;
    throw error;
  }
}

function printNextSteps(): void {
  const outputs = JSON.parse(readFileSync(OUTPUTS_FILE, "utf8")) as Record<string, Record<string, string>>;
  for (const [stack, values] of Object.entries(outputs)) {
    const lines = [
      "",
      `${stack} deployed (config ${values.ConfigVersion ?? "?"}).`,
      `  REST:      ${values.RestApiUrl}`,
      `  WebSocket: ${values.WebSocketUrl}`,
      "",
      "Fill the provider keys (never in the template):",
      `  ${values.FillSecretCommand}`,
      "",
      "Create an API key (or deploy with -c authTokenSha256=<sha256 of your token>), then try:",
      `  ${values.TryItCommand}`,
      "",
    ];
    process.stdout.write(`${lines.join("\n")}\n`);
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`deploy failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
