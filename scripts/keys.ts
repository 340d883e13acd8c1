/**
 * `npm run keys -- create|list|revoke`: API keys per tenant, against the
 * local stack (default: the running `npm start`, found through
 * DATA_DIR/stack-outputs.json) or a deployed stack (`--stack <name>`: its
 * TableName output, read with CloudFormation, and the default AWS
 * credentials). Keys are stored hashed; `create` prints the key once.
 *
 *   npm run keys -- create --tenant acme --name ci [--scopes operator.read,operator.write] [--models openai/gpt-4o-mini] [--rate-limit 120]
 *   npm run keys -- list [--tenant acme]
 *   npm run keys -- revoke key_0123456789abcdef
 *   ... --stack AgentRunner [--region eu-west-1]   (a deployed stack)
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { CloudFormationClient, DescribeStacksCommand } from "@aws-sdk/client-cloudformation";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { z } from "zod";
import { createApiKey, listApiKeys, revokeApiKey } from "../shared/aws/api-keys";
import type { Db } from "../shared/aws/dynamo";
import { SCOPES } from "../shared/core/access";

export const LOCAL_OUTPUTS_FILE = "stack-outputs.json";

const CreateSchema = z.object({
  tenant: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, "tenant: 1-64 of A-Z a-z 0-9 _ . -"),
  name: z.string().min(1).max(128),
  scopes: z.array(z.enum(SCOPES)).min(1),
  models: z.array(z.string().min(1)).optional(),
  rateLimitPerMinute: z.number().int().positive().optional(),
});

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      tenant: { type: "string" },
      name: { type: "string" },
      scopes: { type: "string" },
      models: { type: "string" },
      "rate-limit": { type: "string" },
      stack: { type: "string" },
      region: { type: "string" },
      "data-dir": { type: "string" },
    },
  });
  const [command, arg] = positionals;
  const db = await connect(values);
  if (command === "create") {
    const input = CreateSchema.parse({
      tenant: values.tenant,
      name: values.name,
      scopes: (values.scopes ?? "operator.read,operator.write").split(","),
      ...(values.models ? { models: values.models.split(",") } : {}),
      ...(values["rate-limit"] ? { rateLimitPerMinute: Number(values["rate-limit"]) } : {}),
    });
    const { key, record } = await createApiKey(db, { tenantId: input.tenant, name: input.name, scopes: input.scopes, models: input.models, rateLimitPerMinute: input.rateLimitPerMinute });
    process.stdout.write(`${JSON.stringify({ keyId: record.keyId, tenantId: record.tenantId, name: record.name, scopes: record.scopes, key }, null, 2)}\n`);
    process.stderr.write("Store the key now: only its SHA-256 is kept.\n");
  } else if (command === "list") {
    const records = (await listApiKeys(db)).filter((r) => !values.tenant || r.tenantId === values.tenant);
    for (const r of records) {
      process.stdout.write(`${r.keyId}\t${r.tenantId}\t${r.name}\t${r.scopes.join(",")}\t${r.revokedAt ? `revoked ${new Date(r.revokedAt).toISOString()}` : "active"}\n`);
    }
  } else if (command === "revoke" && arg) {
    if (!(await revokeApiKey(db, arg))) throw new Error(`no key ${arg}`);
    process.stdout.write(`revoked ${arg} (the authorizer refuses it within 300 s, its cache time)\n`);
  } else {
    throw new Error("usage: npm run keys -- create --tenant T --name N [--scopes a,b] | list [--tenant T] | revoke <keyId>  [--stack NAME [--region R]]");
  }
}

async function connect(values: { stack?: string; region?: string; "data-dir"?: string }): Promise<Db> {
  if (values.stack) {
    const region = values.region ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION;
    const out = await new CloudFormationClient({ region }).send(new DescribeStacksCommand({ StackName: values.stack }));
    const table = out.Stacks?.[0]?.Outputs?.find((o) => o.OutputKey === "TableName")?.OutputValue;
    if (!table) throw new Error(`stack ${values.stack} has no TableName output`);
    return { doc: DynamoDBDocumentClient.from(new DynamoDBClient({ region })), table, now: Date.now };
  }
  const file = join(resolve(values["data-dir"] ?? process.env.DATA_DIR ?? ".data"), LOCAL_OUTPUTS_FILE);
  const outputs = JSON.parse(readFileSync(file, "utf8")) as { TableName: string; AwsEndpoint: string; Region: string };
  // The local edge's admin key (infra/local/stack.ts ADMIN_CREDENTIALS).
  const client = new DynamoDBClient({ region: outputs.Region, endpoint: outputs.AwsEndpoint, credentials: { accessKeyId: "local", secretAccessKey: "local" } });
  return { doc: DynamoDBDocumentClient.from(client), table: outputs.TableName, now: Date.now };
}

main().catch((error: unknown) => {
  process.stderr.write(`keys: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
