/**
 * A small Secrets Manager for the local stack, served in-process behind the
 * AWS edge (a LocalServiceHandler) in the AWS JSON 1.1 protocol that
 * `@aws-sdk/client-secrets-manager` speaks: `POST /`,
 * `x-amz-target: secretsmanager.<Op>`, errors as HTTP 400
 * `{"__type": "<Code>", "message"}`.
 *
 * Operations: CreateSecret, GetSecretValue, PutSecretValue, DescribeSecret,
 * ListSecrets, DeleteSecret. Versions carry AWSCURRENT / AWSPREVIOUS like
 * AWS; older versions are dropped at once (AWS keeps up to 100). No
 * rotation, replication, resource policies, tags or KMS; ListSecrets ignores
 * Filters and returns one page.
 *
 * With `persistFile`, secrets survive restarts: the whole store is rewritten
 * after every change through a temp file and a rename (a crash leaves the old
 * file or the new one, never half of one), readable by the owner only.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import * as z from "zod";
import type { LocalServiceHandler, LocalServiceResponse } from "./aws-edge";

export interface LocalSecretsManagerOptions {
  region: string;
  accountId: string;
  /** JSON file holding the secrets across restarts; absent: in memory only. */
  persistFile?: string;
}

export interface LocalSecretsManager {
  handler: LocalServiceHandler;
  /** The ARN of the secret a SecretId (name, ARN or ARN without its suffix) names, for IAM resource matching. */
  arnForId(id: string): string | undefined;
  /** Sets the secret's current value, creating the secret when a name is not known yet. Returns its ARN. */
  put(nameOrArn: string, value: string): string;
  /** Throws ResourceExistsException when the name is taken. Returns the new ARN. */
  create(name: string, value: string, description?: string): string;
}

export type SecretsManagerErrorCode =
  | "ResourceNotFoundException"
  | "ResourceExistsException"
  | "InvalidRequestException"
  | "InvalidParameterException"
  | "UnknownOperationException";

export class SecretsManagerError extends Error {
  constructor(
    readonly code: SecretsManagerErrorCode,
    message: string,
  ) {
    super(message);
    this.name = code;
  }
}

const CURRENT = "AWSCURRENT";
const PREVIOUS = "AWSPREVIOUS";
const TARGET_PREFIX = "secretsmanager.";
const CONTENT_TYPE = "application/x-amz-json-1.1";
const SUFFIX_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const DEFAULT_RECOVERY_DAYS = 30;
const NOT_FOUND = "Secrets Manager can't find the specified secret.";
const MARKED_FOR_DELETION = "You can't perform this operation on the secret because it was marked for deletion.";

// Persisted format, version 1. A new field that old files lack must be optional or get a new version.
const versionSchema = z.object({
  versionId: z.string(),
  secretString: z.string().optional(),
  secretBinary: z.string().optional(),
  stages: z.array(z.string()),
  createdDate: z.number(),
});
const secretSchema = z.object({
  arn: z.string(),
  name: z.string(),
  description: z.string().optional(),
  createdDate: z.number(),
  lastChangedDate: z.number(),
  deletedDate: z.number().optional(),
  versions: z.array(versionSchema),
});
const storeFileSchema = z.object({ schemaVersion: z.literal(1), secrets: z.array(secretSchema) });

type SecretRecord = z.infer<typeof secretSchema>;
type SecretVersion = z.infer<typeof versionSchema>;
type SecretValue = Pick<SecretVersion, "secretString" | "secretBinary">;
type Json = Record<string, unknown>;
type Operation = (input: Json) => Json;

export function createLocalSecretsManager(options: LocalSecretsManagerOptions): LocalSecretsManager {
  const secrets = new Map<string, SecretRecord>(loadSecrets(options.persistFile).map((secret) => [secret.name, secret]));
  const persist = () => saveSecrets(options.persistFile, [...secrets.values()]);
  const store = { secrets, persist, options };
  const operations = secretOperations(store);
  return {
    handler: (request) => serve(operations, request.headers["x-amz-target"], request.method, request.body),
    arnForId: (id) => findSecret(secrets, id)?.arn,
    put: (nameOrArn, value) => {
      const existing = findSecret(secrets, nameOrArn);
      if (!existing && !nameOrArn.startsWith("arn:")) return createSecret(store, nameOrArn, { secretString: value }, undefined, randomUUID()).arn;
      return putValue(store, requireLive(existing), { secretString: value }, randomUUID()).arn;
    },
    create: (name, value, description) => createSecret(store, name, { secretString: value }, description, randomUUID()).arn,
  };
}

interface Store {
  secrets: Map<string, SecretRecord>;
  persist(): void;
  options: LocalSecretsManagerOptions;
}

function secretOperations(store: Store): Record<string, Operation> {
  return {
    CreateSecret: (input) => {
      const secret = createSecret(store, requireString(input, "Name"), valueOf(input), optionalString(input, "Description"), tokenOf(input));
      return { ARN: secret.arn, Name: secret.name, VersionId: currentVersion(secret)?.versionId };
    },
    GetSecretValue: (input) => getValue(requireLive(findSecret(store.secrets, requireString(input, "SecretId"))), input),
    PutSecretValue: (input) => {
      const secret = putValue(store, requireLive(findSecret(store.secrets, requireString(input, "SecretId"))), valueOf(input), tokenOf(input));
      const version = currentVersion(secret);
      return { ARN: secret.arn, Name: secret.name, VersionId: version?.versionId, VersionStages: version?.stages };
    },
    DescribeSecret: (input) => describe(requireFound(findSecret(store.secrets, requireString(input, "SecretId")))),
    ListSecrets: (input) => ({
      SecretList: [...store.secrets.values()].filter((secret) => input.IncludePlannedDeletion === true || secret.deletedDate === undefined).map(describe),
    }),
    DeleteSecret: (input) => deleteSecret(store, requireFound(findSecret(store.secrets, requireString(input, "SecretId"))), input),
  };
}

function createSecret(store: Store, name: string, value: SecretValue, description: string | undefined, versionId: string): SecretRecord {
  const existing = store.secrets.get(name);
  if (existing?.deletedDate !== undefined) {
    throw new SecretsManagerError("InvalidRequestException", "You can't create this secret because a secret with this name is already scheduled for deletion.");
  }
  if (existing) throw new SecretsManagerError("ResourceExistsException", `The operation failed because the secret ${name} already exists.`);
  const now = Date.now();
  const { region, accountId } = store.options;
  const secret: SecretRecord = {
    arn: `arn:aws:secretsmanager:${region}:${accountId}:secret:${name}-${randomSuffix()}`,
    name,
    ...(description === undefined ? {} : { description }),
    createdDate: now,
    lastChangedDate: now,
    versions: hasValue(value) ? [{ versionId, ...value, stages: [CURRENT], createdDate: now }] : [],
  };
  store.secrets.set(name, secret);
  store.persist();
  return secret;
}

/** AWSCURRENT moves to the new version, the old current becomes AWSPREVIOUS, anything older is dropped. */
function putValue(store: Store, secret: SecretRecord, value: SecretValue, versionId: string): SecretRecord {
  if (!hasValue(value)) throw new SecretsManagerError("InvalidParameterException", "You must provide either SecretString or SecretBinary.");
  const replayed = secret.versions.find((version) => version.versionId === versionId);
  if (replayed) return replayOf(secret, replayed, value);
  const now = Date.now();
  const kept = secret.versions
    .filter((version) => version.stages.includes(CURRENT))
    .map((version) => ({ ...version, stages: [PREVIOUS] }));
  secret.versions = [{ versionId, ...value, stages: [CURRENT], createdDate: now }, ...kept];
  secret.lastChangedDate = now;
  store.persist();
  return secret;
}

/** AWS: the same ClientRequestToken with the same value is a no-op; with another value, an error. */
function replayOf(secret: SecretRecord, version: SecretVersion, value: SecretValue): SecretRecord {
  if (version.secretString === value.secretString && version.secretBinary === value.secretBinary) return secret;
  throw new SecretsManagerError("ResourceExistsException", `A resource with the ID you requested already exists.`);
}

function getValue(secret: SecretRecord, input: Json): Json {
  const versionId = optionalString(input, "VersionId");
  const stage = optionalString(input, "VersionStage") ?? (versionId === undefined ? CURRENT : undefined);
  const version = secret.versions.find(
    (candidate) => (versionId === undefined || candidate.versionId === versionId) && (stage === undefined || candidate.stages.includes(stage)),
  );
  if (!version) {
    const which = versionId === undefined ? `staging label: ${stage}` : `VersionId: ${versionId}`;
    throw new SecretsManagerError("ResourceNotFoundException", `Secrets Manager can't find the specified secret value for ${which}`);
  }
  return {
    ARN: secret.arn,
    Name: secret.name,
    VersionId: version.versionId,
    ...(version.secretString === undefined ? {} : { SecretString: version.secretString }),
    ...(version.secretBinary === undefined ? {} : { SecretBinary: version.secretBinary }),
    VersionStages: version.stages,
    CreatedDate: epochSeconds(version.createdDate),
  };
}

function describe(secret: SecretRecord): Json {
  return {
    ARN: secret.arn,
    Name: secret.name,
    ...(secret.description === undefined ? {} : { Description: secret.description }),
    CreatedDate: epochSeconds(secret.createdDate),
    LastChangedDate: epochSeconds(secret.lastChangedDate),
    ...(secret.deletedDate === undefined ? {} : { DeletedDate: epochSeconds(secret.deletedDate) }),
    VersionIdsToStages: Object.fromEntries(secret.versions.map((version) => [version.versionId, version.stages])),
  };
}

/** Without ForceDeleteWithoutRecovery the secret is only marked; nothing purges it locally (AWS does after the window). */
function deleteSecret(store: Store, secret: SecretRecord, input: Json): Json {
  const now = Date.now();
  const result = { ARN: secret.arn, Name: secret.name };
  if (input.ForceDeleteWithoutRecovery === true) {
    store.secrets.delete(secret.name);
    store.persist();
    return { ...result, DeletionDate: epochSeconds(now) };
  }
  const days = typeof input.RecoveryWindowInDays === "number" ? input.RecoveryWindowInDays : DEFAULT_RECOVERY_DAYS;
  secret.deletedDate ??= now;
  store.persist();
  return { ...result, DeletionDate: epochSeconds(secret.deletedDate + days * 24 * 60 * 60 * 1000) };
}

/** A SecretId is a name, a full ARN, or an ARN without AWS's `-XXXXXX` suffix. */
function findSecret(secrets: Map<string, SecretRecord>, id: string): SecretRecord | undefined {
  if (!id.startsWith("arn:")) return secrets.get(id);
  return [...secrets.values()].find((secret) => secret.arn === id || secret.arn.slice(0, -7) === id);
}

function requireFound(secret: SecretRecord | undefined): SecretRecord {
  if (!secret) throw new SecretsManagerError("ResourceNotFoundException", NOT_FOUND);
  return secret;
}

function requireLive(secret: SecretRecord | undefined): SecretRecord {
  const found = requireFound(secret);
  if (found.deletedDate !== undefined) throw new SecretsManagerError("InvalidRequestException", MARKED_FOR_DELETION);
  return found;
}

function currentVersion(secret: SecretRecord): SecretVersion | undefined {
  return secret.versions.find((version) => version.stages.includes(CURRENT));
}

// ---------------------------------------------------------------- wire

async function serve(operations: Record<string, Operation>, target: string | undefined, method: string, body: Buffer): Promise<LocalServiceResponse> {
  try {
    const name = target?.startsWith(TARGET_PREFIX) ? target.slice(TARGET_PREFIX.length) : "";
    const operation = method === "POST" ? operations[name] : undefined;
    if (!operation) throw new SecretsManagerError("UnknownOperationException", `Unknown operation: '${String(target)}'`);
    return respond(200, operation(parseInput(body)));
  } catch (error) {
    if (!(error instanceof SecretsManagerError)) throw error;
    return respond(400, { __type: error.code, message: error.message }, error.code);
  }
}

function respond(statusCode: number, payload: Json, errorType?: string): LocalServiceResponse {
  const headers: Record<string, string> = { "content-type": CONTENT_TYPE, "x-amzn-requestid": randomUUID() };
  if (errorType) headers["x-amzn-errortype"] = errorType;
  return { statusCode, headers, body: JSON.stringify(payload) };
}

function parseInput(body: Buffer): Json {
  const text = body.toString("utf8");
  if (text.trim() === "") return {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) return parsed as Json;
  } catch {
    // fall through to the error below
  }
  throw new SecretsManagerError("InvalidRequestException", "The request body is not a JSON object.");
}

function requireString(input: Json, field: string): string {
  const value = optionalString(input, field);
  if (value === undefined) throw new SecretsManagerError("InvalidParameterException", `You must provide a value for ${field}.`);
  return value;
}

function optionalString(input: Json, field: string): string | undefined {
  const value = input[field];
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** SecretBinary travels base64-encoded in JSON; it is stored and returned as that text. */
function valueOf(input: Json): SecretValue {
  const value: SecretValue = {};
  if (typeof input.SecretString === "string") value.secretString = input.SecretString;
  if (typeof input.SecretBinary === "string") value.secretBinary = input.SecretBinary;
  return value;
}

function hasValue(value: SecretValue): boolean {
  return value.secretString !== undefined || value.secretBinary !== undefined;
}

/** The SDK fills ClientRequestToken itself (an idempotency token); it becomes the version id. */
function tokenOf(input: Json): string {
  return optionalString(input, "ClientRequestToken") ?? randomUUID();
}

function randomSuffix(): string {
  return Array.from(randomBytes(6), (byte) => SUFFIX_ALPHABET[byte % SUFFIX_ALPHABET.length]).join("");
}

function epochSeconds(ms: number): number {
  return ms / 1000;
}

// ---------------------------------------------------------------- persistence

function loadSecrets(file: string | undefined): SecretRecord[] {
  if (!file || !existsSync(file)) return [];
  return storeFileSchema.parse(JSON.parse(readFileSync(file, "utf8"))).secrets;
}

function saveSecrets(file: string | undefined, secrets: SecretRecord[]): void {
  if (!file) return;
  mkdirSync(dirname(file), { recursive: true });
  const temp = `${file}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  writeFileSync(temp, JSON.stringify({ schemaVersion: 1, secrets }), { mode: 0o600 });
  renameSync(temp, file);
}
