/**
 * What an AWS SDK request asks IAM for: the service (from the SigV4
 * credential scope, the one place every protocol names it) and the
 * `{ action, resources }` checks IAM makes for it. Usually one check; a
 * DynamoDB transaction is authorised item by item, so it yields one check per
 * item action.
 *
 * Best effort by design: the operations our functions call are mapped
 * precisely (and pinned by test/local/aws-edge.test.ts); anything else falls
 * back to `<service>:<Operation>` or `<service>:Unknown` on `*`, which only an
 * admin identity or a `*` grant passes. Known gaps: S3 virtual-hosted-style
 * addressing, DynamoDB PartiQL (checked on `*`), policy keys beyond the
 * resource ARN (e.g. `dynamodb:LeadingKeys`).
 */
import { stateMachineOfTaskToken } from "../step-functions/task-tokens";

export interface EdgeRequest {
  method: string;
  /** Path with query string, as on the request line. */
  path: string;
  /** Lowercased names. */
  headers: Record<string, string>;
  body: Buffer;
}

export interface RequestActionsContext {
  region: string;
  accountId: string;
  queueArnForUrl?(url: string): string | undefined;
  secretArnForId?(id: string): string | undefined;
}

export interface ActionCheck {
  action: string;
  resources: string[];
}

export interface RequestActions {
  service: string;
  checks: ActionCheck[];
}

export interface CredentialScope {
  accessKeyId: string;
  date: string;
  region: string;
  service: string;
}

type JsonBody = Record<string, unknown>;
type ServiceMapper = (request: EdgeRequest, context: RequestActionsContext) => ActionCheck[];

const ANY = ["*"];

/** `Credential=AKID/20261201/us-east-1/dynamodb/aws4_request` from the header, or `X-Amz-Credential` of a presigned URL. */
export function credentialScopeOf(request: Pick<EdgeRequest, "path" | "headers">): CredentialScope | undefined {
  const fromHeader = /Credential=([^,\s]+)/.exec(request.headers.authorization ?? "")?.[1];
  const credential = fromHeader ?? queryOf(request.path).get("X-Amz-Credential") ?? undefined;
  const [accessKeyId, date, region, service, terminator] = (credential ?? "").split("/");
  if (!accessKeyId || !service || terminator !== "aws4_request") return undefined;
  return { accessKeyId, date, region, service };
}

/**
 * Locally `https://{apiId}.execute-api.{region}.amazonaws.com/{stage}` is
 * rewritten to `${edge}/@execute-api/{apiId}/{stage}`: the API id travels in
 * the path instead of the host name.
 */
export function splitExecuteApiPrefix(path: string): { apiId: string; path: string } | undefined {
  const match = /^\/(?:@|%40)execute-api\/([^/?]+)(.*)$/i.exec(path);
  if (!match) return undefined;
  const rest = match[2];
  return { apiId: safeDecode(match[1]), path: rest.startsWith("/") ? rest : `/${rest}` };
}

export function requestActions(request: EdgeRequest, context: RequestActionsContext): RequestActions {
  const service = credentialScopeOf(request)?.service ?? "unknown";
  const mapper = SERVICE_MAPPERS[service];
  const checks = mapper ? mapper(request, context) : [{ action: `${service}:Unknown`, resources: ANY }];
  return { service, checks };
}

const SERVICE_MAPPERS: Record<string, ServiceMapper> = {
  dynamodb: dynamoChecks,
  sqs: sqsChecks,
  states: stepFunctionsChecks,
  secretsmanager: secretsChecks,
  lambda: lambdaChecks,
  "execute-api": executeApiChecks,
  s3: s3Checks,
};

// ---------------------------------------------------------------- DynamoDB

const DYNAMO_TRANSACT_ITEM_ACTIONS: Record<string, string> = {
  Put: "dynamodb:PutItem",
  Update: "dynamodb:UpdateItem",
  Delete: "dynamodb:DeleteItem",
  ConditionCheck: "dynamodb:ConditionCheckItem",
  Get: "dynamodb:GetItem",
};

function dynamoChecks(request: EdgeRequest, context: RequestActionsContext): ActionCheck[] {
  const operation = targetOperation(request, "DynamoDB_20120810.");
  const body = jsonBody(request);
  if (operation === "TransactWriteItems" || operation === "TransactGetItems") return dynamoTransactionChecks(body, context);
  const action = `dynamodb:${operation ?? "Unknown"}`;
  if (operation === "BatchWriteItem" || operation === "BatchGetItem") {
    return [{ action, resources: Object.keys(objectOf(body.RequestItems)).map((table) => tableArn(table, context)) }];
  }
  const table = stringOf(body.TableName);
  if (!table) return [{ action, resources: ANY }];
  const index = stringOf(body.IndexName);
  const arn = tableArn(table, context);
  return [{ action, resources: [index && (operation === "Query" || operation === "Scan") ? `${arn}/index/${index}` : arn] }];
}

function dynamoTransactionChecks(body: JsonBody, context: RequestActionsContext): ActionCheck[] {
  const items = Array.isArray(body.TransactItems) ? body.TransactItems : [];
  const checks = items.flatMap((item) =>
    Object.entries(objectOf(item)).flatMap(([kind, detail]) => {
      const action = DYNAMO_TRANSACT_ITEM_ACTIONS[kind];
      const table = stringOf(objectOf(detail).TableName);
      return action && table ? [{ action, resources: [tableArn(table, context)] }] : [];
    }),
  );
  return checks.length > 0 ? checks : [{ action: "dynamodb:Unknown", resources: ANY }];
}

/** TableName may itself be a table ARN (DynamoDB accepts both). */
function tableArn(table: string, context: RequestActionsContext): string {
  return table.startsWith("arn:") ? table : `arn:aws:dynamodb:${context.region}:${context.accountId}:table/${table}`;
}

// ---------------------------------------------------------------- SQS

/** IAM has no batch actions: a batch is authorised as its single-message action. */
const SQS_BATCH_ACTIONS: Record<string, string> = {
  SendMessageBatch: "SendMessage",
  DeleteMessageBatch: "DeleteMessage",
  ChangeMessageVisibilityBatch: "ChangeMessageVisibility",
};

function sqsChecks(request: EdgeRequest, context: RequestActionsContext): ActionCheck[] {
  const params = sqsParams(request);
  const operation = params.operation ?? "Unknown";
  const action = `sqs:${SQS_BATCH_ACTIONS[operation] ?? operation}`;
  if (params.queueUrl) return [{ action, resources: [queueArn(params.queueUrl, context)] }];
  if (params.queueName) return [{ action, resources: [`arn:aws:sqs:${context.region}:${context.accountId}:${params.queueName}`] }];
  return [{ action, resources: ANY }];
}

/**
 * JSON protocol (`x-amz-target: AmazonSQS.<Op>`, what SDK v3 sends) or the
 * legacy query protocol (`Action=<Op>` in a form body or the query string,
 * the queue URL possibly being the request path itself).
 */
function sqsParams(request: EdgeRequest): { operation?: string; queueUrl?: string; queueName?: string } {
  const operation = targetOperation(request, "AmazonSQS.");
  if (operation) {
    const body = jsonBody(request);
    return { operation, queueUrl: stringOf(body.QueueUrl), queueName: stringOf(body.QueueName) };
  }
  const form = new URLSearchParams(request.body.toString("utf8"));
  const query = queryOf(request.path);
  const param = (name: string) => form.get(name) ?? query.get(name) ?? undefined;
  const pathname = pathOf(request.path);
  return {
    operation: param("Action"),
    queueUrl: param("QueueUrl") ?? (pathname !== "/" ? pathname : undefined),
    queueName: param("QueueName"),
  };
}

function queueArn(queueUrl: string, context: RequestActionsContext): string {
  const known = context.queueArnForUrl?.(queueUrl);
  if (known) return known;
  const name = queueUrl.split("?")[0].split("/").filter(Boolean).pop() ?? queueUrl;
  return `arn:aws:sqs:${context.region}:${context.accountId}:${name}`;
}

// ---------------------------------------------------------------- Step Functions

const STATES_ARN_FIELDS = ["stateMachineArn", "executionArn", "activityArn", "mapRunArn", "resourceArn"];

function stepFunctionsChecks(request: EdgeRequest, context: RequestActionsContext): ActionCheck[] {
  const operation = targetOperation(request, "AWSStepFunctions.") ?? "Unknown";
  const body = jsonBody(request);
  const arn = STATES_ARN_FIELDS.map((field) => stringOf(body[field])).find(Boolean);
  if (arn) return [{ action: `states:${operation}`, resources: [arn] }];
  // SendTaskSuccess / Failure / Heartbeat act on the machine whose task issued the token.
  const owner = stringOf(body.taskToken) ? stateMachineOfTaskToken(stringOf(body.taskToken)!) : undefined;
  if (owner) return [{ action: `states:${operation}`, resources: [owner] }];
  const name = stringOf(body.name);
  if (name && operation === "CreateStateMachine") {
    return [{ action: `states:${operation}`, resources: [`arn:aws:states:${context.region}:${context.accountId}:stateMachine:${name}`] }];
  }
  return [{ action: `states:${operation}`, resources: ANY }];
}

// ---------------------------------------------------------------- Secrets Manager

function secretsChecks(request: EdgeRequest, context: RequestActionsContext): ActionCheck[] {
  const operation = targetOperation(request, "secretsmanager.") ?? "Unknown";
  const body = jsonBody(request);
  const action = `secretsmanager:${operation}`;
  if (operation === "BatchGetSecretValue") {
    const ids = Array.isArray(body.SecretIdList) ? body.SecretIdList.map(String) : [];
    const each = ids.length > 0 ? [{ action: "secretsmanager:GetSecretValue", resources: ids.map((id) => secretArn(id, context)) }] : [];
    return [{ action, resources: ANY }, ...each];
  }
  const id = stringOf(body.SecretId) ?? (operation === "CreateSecret" ? stringOf(body.Name) : undefined);
  return [{ action, resources: id ? [secretArn(id, context)] : ANY }];
}

/**
 * AWS appends six random characters to a secret's ARN, and policies grant
 * `secret:<name>-??????`; the emulator's own ARN for the name matches those,
 * the bare fallback only matches `secret:<name>*` grants.
 */
function secretArn(id: string, context: RequestActionsContext): string {
  const known = context.secretArnForId?.(id);
  if (known) return known;
  return id.startsWith("arn:") ? id : `arn:aws:secretsmanager:${context.region}:${context.accountId}:secret:${id}`;
}

// ---------------------------------------------------------------- Lambda

const LAMBDA_INVOKE_PATH = /^\/[\d-]+\/functions\/([^/]+)\/(?:invocations|response-streaming-invocations|invoke-async)\/?$/;
const LAMBDA_FUNCTION_PATH = /^\/[\d-]+\/functions\/([^/]+)(\/[^/]+)?\/?$/;

/** Any invoke form (including InvokeWithResponseStream) is authorised as lambda:InvokeFunction. */
function lambdaChecks(request: EdgeRequest, context: RequestActionsContext): ActionCheck[] {
  const pathname = pathOf(request.path);
  const qualifier = queryOf(request.path).get("Qualifier") ?? undefined;
  const invoked = LAMBDA_INVOKE_PATH.exec(pathname);
  if (invoked) return [{ action: "lambda:InvokeFunction", resources: [functionArn(safeDecode(invoked[1]), qualifier, context)] }];
  const named = LAMBDA_FUNCTION_PATH.exec(pathname);
  if (!named) return [{ action: `lambda:${lambdaCollectionOperation(request.method, pathname)}`, resources: ANY }];
  const operation = lambdaFunctionOperation(request.method, named[2]);
  return [{ action: `lambda:${operation}`, resources: [functionArn(safeDecode(named[1]), qualifier, context)] }];
}

function lambdaCollectionOperation(method: string, pathname: string): string {
  if (!/^\/[\d-]+\/functions\/?$/.test(pathname)) return "Unknown";
  return method === "POST" ? "CreateFunction" : "ListFunctions";
}

function lambdaFunctionOperation(method: string, subresource: string | undefined): string {
  const key = `${method} ${subresource ?? ""}`;
  const operations: Record<string, string> = {
    "GET ": "GetFunction",
    "DELETE ": "DeleteFunction",
    "GET /configuration": "GetFunctionConfiguration",
    "PUT /configuration": "UpdateFunctionConfiguration",
    "PUT /code": "UpdateFunctionCode",
    "GET /policy": "GetPolicy",
    "GET /versions": "ListVersionsByFunction",
    "POST /versions": "PublishVersion",
    "GET /aliases": "ListAliases",
    "POST /aliases": "CreateAlias",
  };
  return operations[key] ?? "Unknown";
}

/** FunctionName may be `name`, `name:qualifier`, `acct:function:name[:q]` or a full ARN. */
function functionArn(functionName: string, qualifier: string | undefined, context: RequestActionsContext): string {
  const prefix = `arn:aws:lambda:${context.region}:`;
  let arn: string;
  if (functionName.startsWith("arn:")) arn = functionName;
  else if (/^\d{12}:function:/.test(functionName)) arn = `${prefix}${functionName}`;
  else arn = `${prefix}${context.accountId}:function:${functionName}`;
  const alreadyQualified = arn.split(":").length > 7;
  return qualifier && !alreadyQualified ? `${arn}:${qualifier}` : arn;
}

// ---------------------------------------------------------------- API Gateway Management API

function executeApiChecks(request: EdgeRequest, context: RequestActionsContext): ActionCheck[] {
  const prefixed = splitExecuteApiPrefix(request.path);
  // Without the prefix the API is unknown: only a grant on every API (`*`) covers it.
  const apiId = prefixed?.apiId ?? "*";
  const pathname = pathOf(prefixed?.path ?? request.path);
  const base = `arn:aws:execute-api:${context.region}:${context.accountId}:${apiId}`;
  const management = /^\/([^/]+)\/(?:@|%40)connections\/([^/]+)$/i.exec(pathname);
  if (management) {
    const [, stage, connectionId] = management;
    return [{ action: "execute-api:ManageConnections", resources: [`${base}/${stage}/${request.method}/@connections/${safeDecode(connectionId)}`] }];
  }
  const [, stage = "", ...rest] = pathname.split("/");
  return [{ action: "execute-api:Invoke", resources: [`${base}/${stage}/${request.method}/${rest.join("/")}`] }];
}

// ---------------------------------------------------------------- S3 (path-style)

function s3Checks(request: EdgeRequest): ActionCheck[] {
  const [bucket, ...keyParts] = pathOf(request.path).split("/").slice(1).map(safeDecode);
  if (!bucket) return [{ action: "s3:ListAllMyBuckets", resources: ANY }];
  const query = queryOf(request.path);
  const key = keyParts.join("/");
  if (key === "") return s3BucketChecks(request, bucket, query);
  const checks = [{ action: `s3:${s3ObjectOperation(request.method, query)}`, resources: [`arn:aws:s3:::${bucket}/${key}`] }];
  const copySource = request.headers["x-amz-copy-source"];
  if (request.method === "PUT" && copySource) {
    const source = safeDecode(copySource.split("?")[0]).replace(/^\//, "");
    checks.push({ action: "s3:GetObject", resources: [`arn:aws:s3:::${source}`] });
  }
  return checks;
}

function s3BucketChecks(request: EdgeRequest, bucket: string, query: URLSearchParams): ActionCheck[] {
  if (request.method === "POST" && query.has("delete")) {
    const keys = Array.from(request.body.toString("utf8").matchAll(/<Key>([^<]*)<\/Key>/g), (match) => decodeXml(match[1]));
    return [{ action: "s3:DeleteObject", resources: keys.length > 0 ? keys.map((key) => `arn:aws:s3:::${bucket}/${key}`) : [`arn:aws:s3:::${bucket}/*`] }];
  }
  const operations: Record<string, string> = { PUT: "CreateBucket", DELETE: "DeleteBucket" };
  let operation = operations[request.method] ?? "ListBucket";
  if (query.has("versions")) operation = "ListBucketVersions";
  else if (query.has("uploads")) operation = "ListBucketMultipartUploads";
  else if (query.has("location")) operation = "GetBucketLocation";
  return [{ action: `s3:${operation}`, resources: [`arn:aws:s3:::${bucket}`] }];
}

function s3ObjectOperation(method: string, query: URLSearchParams): string {
  const write = method === "PUT" || method === "POST";
  if (query.has("tagging")) return method === "GET" ? "GetObjectTagging" : method === "DELETE" ? "DeleteObjectTagging" : "PutObjectTagging";
  if (query.has("acl")) return write ? "PutObjectAcl" : "GetObjectAcl";
  if (method === "DELETE") return query.has("uploadId") ? "AbortMultipartUpload" : "DeleteObject";
  if (method === "GET" && query.has("uploadId")) return "ListMultipartUploadParts";
  // Multipart uploads (`?uploads`, `?uploadId=&partNumber=`) are authorised as PutObject.
  return write ? "PutObject" : "GetObject";
}

function decodeXml(text: string): string {
  return text.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&amp;/g, "&");
}

// ---------------------------------------------------------------- shared parsing

function targetOperation(request: EdgeRequest, prefix: string): string | undefined {
  const target = request.headers["x-amz-target"] ?? "";
  return target.startsWith(prefix) && target.length > prefix.length ? target.slice(prefix.length) : undefined;
}

/** A body that is not a JSON object checks as `{}`: the emulator answers the malformed request itself. */
function jsonBody(request: EdgeRequest): JsonBody {
  try {
    return objectOf(JSON.parse(request.body.toString("utf8")));
  } catch {
    return {};
  }
}

function objectOf(value: unknown): JsonBody {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as JsonBody) : {};
}

function stringOf(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** A malformed escape stays as written: the emulator rejects the request itself. */
function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function pathOf(path: string): string {
  const index = path.indexOf("?");
  return index === -1 ? path : path.slice(0, index);
}

function queryOf(path: string): URLSearchParams {
  const index = path.indexOf("?");
  return new URLSearchParams(index === -1 ? "" : path.slice(index + 1));
}
