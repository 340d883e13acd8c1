/**
 * `npm run sam:env [-- --assembly cdk.out --endpoint http://host.docker.internal:3001] > env.json`:
 * writes SAM's `--env-vars` file from the synthesized template, so that
 *   sam local invoke -t cdk.out/AgentRunner.template.json <LogicalId> -e events/<file>.json --env-vars env.json
 * runs any function against the emulators of a running `npm start`: every
 * function's template environment with Refs resolved to the names `npm start`
 * deploys (deterministic), the edge as AWS_ENDPOINT_URL and the function's own
 * local access key, so its IAM policy is enforced there too.
 */
import { parseArgs } from "node:util";
import { loadAssembly } from "../infra/local/deploy/assembly";
import { resourceFacts } from "../infra/local/deploy/facts";
import { resolveValue } from "../infra/local/deploy/intrinsics";
import { localizeUrls, LOCAL_SECRET_KEY, localAccessKeyId } from "../infra/local/deploy/deploy";
import { LOCAL_ACCOUNT, LOCAL_REGION } from "../infra/local/stack";

const { values } = parseArgs({ options: { assembly: { type: "string", default: "cdk.out" }, endpoint: { type: "string", default: "http://host.docker.internal:3001" } } });
const assembly = loadAssembly(values.assembly!);
const facts = resourceFacts(assembly.template, { region: LOCAL_REGION, accountId: LOCAL_ACCOUNT, stackName: assembly.stackName, sqsEndpoint: values.endpoint! });
const scope = { region: LOCAL_REGION, accountId: LOCAL_ACCOUNT, stackName: assembly.stackName, resources: facts };
const envJson: Record<string, Record<string, string>> = {};
for (const [logicalId, resource] of Object.entries(assembly.template.Resources ?? {})) {
  if (resource.Type !== "AWS::Lambda::Function") continue;
  const variables = resolveValue((resource.Properties?.Environment as { Variables?: unknown })?.Variables ?? {}, scope) as Record<string, string>;
  envJson[logicalId] = {
    ...localizeUrls(variables, values.endpoint!),
    AWS_ENDPOINT_URL: values.endpoint!,
    AWS_ACCESS_KEY_ID: localAccessKeyId(logicalId),
    AWS_SECRET_ACCESS_KEY: LOCAL_SECRET_KEY,
    AWS_REGION: LOCAL_REGION,
  };
}
process.stdout.write(`${JSON.stringify(envJson, null, 2)}\n`);
