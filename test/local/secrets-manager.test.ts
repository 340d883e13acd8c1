import {
  CreateSecretCommand,
  DeleteSecretCommand,
  DescribeSecretCommand,
  GetSecretValueCommand,
  ListSecretsCommand,
  PutSecretValueCommand,
  SecretsManagerClient,
} from "@aws-sdk/client-secrets-manager";
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type AwsEdge, startAwsEdge } from "../../infra/local/aws-edge";
import { createLocalSecretsManager, type LocalSecretsManager } from "../../infra/local/secrets-manager";

const REGION = "us-east-1";
const ACCOUNT = "000000000000";
const ADMIN_KEY = "admin";
const ARN_PATTERN = /^arn:aws:secretsmanager:us-east-1:000000000000:secret:(.+)-[A-Za-z0-9]{6}$/;

/** The real SDK reaches the emulator the way functions do: through the edge, here as an admin identity. */
async function serve(secrets: LocalSecretsManager): Promise<{ edge: AwsEdge; client: SecretsManagerClient }> {
  const edge = await startAwsEdge({
    region: REGION,
    accountId: ACCOUNT,
    identities: new Map([[ADMIN_KEY, { admin: true, principalArn: `arn:aws:iam::${ACCOUNT}:root` }]]),
    upstreams: { secretsmanager: secrets.handler },
  });
  const client = new SecretsManagerClient({
    region: REGION,
    endpoint: edge.endpoint,
    credentials: { accessKeyId: ADMIN_KEY, secretAccessKey: "x" },
  });
  return { edge, client };
}

async function errorOf(promise: Promise<unknown>): Promise<{ name: string; message: string }> {
  try {
    await promise;
  } catch (error) {
    return error as { name: string; message: string };
  }
  throw new Error("expected the call to fail");
}

describe("local Secrets Manager through the real SDK", () => {
  let secrets: LocalSecretsManager;
  let edge: AwsEdge;
  let client: SecretsManagerClient;
  let counter = 0;
  const freshName = () => `app/secret-${(counter += 1)}`;

  beforeAll(async () => {
    secrets = createLocalSecretsManager({ region: REGION, accountId: ACCOUNT });
    ({ edge, client } = await serve(secrets));
  });

  afterAll(async () => {
    client.destroy();
    await edge.close();
  });

  it("creates a secret with AWS's ARN shape and reads it by name, ARN and ARN without suffix", async () => {
    const name = freshName();

    const created = await client.send(new CreateSecretCommand({ Name: name, SecretString: "s3cret", Description: "test" }));

    expect(created.ARN).toMatch(ARN_PATTERN);
    expect(ARN_PATTERN.exec(created.ARN ?? "")?.[1]).toBe(name);
    expect(created.Name).toBe(name);
    for (const id of [name, created.ARN, created.ARN?.slice(0, -7)]) {
      const value = await client.send(new GetSecretValueCommand({ SecretId: id }));
      expect(value).toMatchObject({ ARN: created.ARN, Name: name, SecretString: "s3cret", VersionId: created.VersionId, VersionStages: ["AWSCURRENT"] });
      expect(value.CreatedDate).toBeInstanceOf(Date);
    }
    expect(secrets.arnForId(name)).toBe(created.ARN);
  });

  it("PutSecretValue makes the new value current and keeps the old one as AWSPREVIOUS", async () => {
    const name = freshName();
    const created = await client.send(new CreateSecretCommand({ Name: name, SecretString: "one" }));

    const put = await client.send(new PutSecretValueCommand({ SecretId: name, SecretString: "two" }));

    expect(put).toMatchObject({ ARN: created.ARN, Name: name, VersionStages: ["AWSCURRENT"] });
    expect((await client.send(new GetSecretValueCommand({ SecretId: name }))).SecretString).toBe("two");
    const previous = await client.send(new GetSecretValueCommand({ SecretId: name, VersionStage: "AWSPREVIOUS" }));
    expect(previous).toMatchObject({ SecretString: "one", VersionId: created.VersionId });
    const described = await client.send(new DescribeSecretCommand({ SecretId: name }));
    expect(described.VersionIdsToStages).toEqual({ [put.VersionId ?? ""]: ["AWSCURRENT"], [created.VersionId ?? ""]: ["AWSPREVIOUS"] });
  });

  it("DescribeSecret and ListSecrets report name, ARN and description", async () => {
    const name = freshName();
    const created = await client.send(new CreateSecretCommand({ Name: name, SecretString: "x", Description: "the api key" }));

    const described = await client.send(new DescribeSecretCommand({ SecretId: created.ARN }));
    const listed = await client.send(new ListSecretsCommand({}));

    expect(described).toMatchObject({ ARN: created.ARN, Name: name, Description: "the api key" });
    expect(described.CreatedDate).toBeInstanceOf(Date);
    expect(listed.SecretList?.find((entry) => entry.Name === name)).toMatchObject({ ARN: created.ARN, Description: "the api key" });
  });

  it("answers a missing secret with ResourceNotFoundException and AWS's message", async () => {
    const error = await errorOf(client.send(new GetSecretValueCommand({ SecretId: "no/such/secret" })));

    expect(error.name).toBe("ResourceNotFoundException");
    expect(error.message).toBe("Secrets Manager can't find the specified secret.");
  });

  it("refuses a second secret of the same name", async () => {
    const name = freshName();
    await client.send(new CreateSecretCommand({ Name: name, SecretString: "x" }));

    const error = await errorOf(client.send(new CreateSecretCommand({ Name: name, SecretString: "y" })));

    expect(error.name).toBe("ResourceExistsException");
    expect(error.message).toBe(`The operation failed because the secret ${name} already exists.`);
  });

  it("DeleteSecret marks the secret for deletion; ForceDeleteWithoutRecovery removes it", async () => {
    const name = freshName();
    await client.send(new CreateSecretCommand({ Name: name, SecretString: "x" }));

    const scheduled = await client.send(new DeleteSecretCommand({ SecretId: name, RecoveryWindowInDays: 7 }));
    const readDeleted = await errorOf(client.send(new GetSecretValueCommand({ SecretId: name })));
    const listed = await client.send(new ListSecretsCommand({}));
    await client.send(new DeleteSecretCommand({ SecretId: name, ForceDeleteWithoutRecovery: true }));
    const readGone = await errorOf(client.send(new DescribeSecretCommand({ SecretId: name })));

    expect(scheduled.DeletionDate).toBeInstanceOf(Date);
    expect(readDeleted.name).toBe("InvalidRequestException");
    expect(listed.SecretList?.some((entry) => entry.Name === name)).toBe(false);
    expect(readGone.name).toBe("ResourceNotFoundException");
    expect(secrets.arnForId(name)).toBeUndefined();
  });

  it("put() upserts and create() seeds, for local tooling", async () => {
    const name = freshName();

    const arn = secrets.put(name, "first");
    expect(secrets.put(arn, "second")).toBe(arn);
    const seeded = secrets.create(freshName(), "seed", "seeded");

    expect((await client.send(new GetSecretValueCommand({ SecretId: name }))).SecretString).toBe("second");
    expect((await client.send(new DescribeSecretCommand({ SecretId: seeded }))).Description).toBe("seeded");
    expect(() => secrets.put(`${arn.slice(0, -6)}zzzzzz`, "x")).toThrowError(expect.objectContaining({ name: "ResourceNotFoundException" }));
  });
});

describe("local Secrets Manager persistence", () => {
  let directory: string;

  beforeAll(() => {
    directory = mkdtempSync(join(tmpdir(), "secrets-"));
  });

  afterEach(() => {
    for (const entry of readdirSync(directory)) rmSync(join(directory, entry), { recursive: true });
  });

  afterAll(() => {
    rmSync(directory, { recursive: true, force: true });
  });

  it("keeps secrets across a restart in an owner-only file, leaving no temp files", () => {
    const persistFile = join(directory, "state", "secrets.json");
    const first = createLocalSecretsManager({ region: REGION, accountId: ACCOUNT, persistFile });
    const arn = first.create("db/password", "hunter2");
    first.put("db/password", "hunter3");

    const second = createLocalSecretsManager({ region: REGION, accountId: ACCOUNT, persistFile });

    expect(second.arnForId("db/password")).toBe(arn);
    expect(statSync(persistFile).mode & 0o777).toBe(0o600);
    expect(readdirSync(join(directory, "state"))).toEqual(["secrets.json"]);
  });

  it("serves the persisted value after a restart", async () => {
    const persistFile = join(directory, "secrets.json");
    createLocalSecretsManager({ region: REGION, accountId: ACCOUNT, persistFile }).create("token", "abc");
    const { edge, client } = await serve(createLocalSecretsManager({ region: REGION, accountId: ACCOUNT, persistFile }));

    try {
      const value = await client.send(new GetSecretValueCommand({ SecretId: "token" }));
      expect(value.SecretString).toBe("abc");
    } finally {
      client.destroy();
      await edge.close();
    }
  });
});
