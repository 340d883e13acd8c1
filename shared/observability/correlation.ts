/**
 * Correlation keys a log line carries, read from the event a function was
 * invoked with (pure: no Powertools here). The run-bound code adds what only
 * the run record knows (sessionKey, executionArn) through `Log.appendKeys`.
 *
 * | Event                          | Keys                                   |
 * |--------------------------------|----------------------------------------|
 * | state machine task `{runId, loop}` | runId, attempt (the next attempt's number), executionGeneration |
 * | REST proxy                     | runId or sessionKey from the path, tenant |
 * | WebSocket                      | connectionId, routeKey, tenant          |
 * | EventBridge execution change   | runId (execution name), executionArn    |
 */
import { runIdOfExecution } from "../core/execution-names";

export type CorrelationKeys = Partial<Record<"runId" | "sessionKey" | "executionArn" | "attempt" | "tenant" | "connectionId" | "routeKey", string | number>>;

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);
const text = (value: unknown): string | undefined => (typeof value === "string" && value !== "" ? value : undefined);

const RUN_PATH = /\/v1\/runs\/([^/]+)/;
const SESSION_PATH = /\/v1\/sessions\/([^/]+)/;

export function correlationKeysOf(event: unknown): CorrelationKeys {
  if (!isObject(event)) return {};
  const keys: CorrelationKeys = {};
  const runId = text(event.runId);
  if (runId) keys.runId = runId;
  if (isObject(event.loop) && typeof event.loop.attempt === "number") keys.attempt = event.loop.attempt + 1;
  const requestContext = isObject(event.requestContext) ? event.requestContext : undefined;
  if (requestContext) Object.assign(keys, fromApiGateway(event, requestContext));
  if (isObject(event.detail) && event.source === "aws.states") Object.assign(keys, fromExecutionEvent(event.detail));
  return keys;
}

function fromApiGateway(event: Json, context: Json): CorrelationKeys {
  const keys: CorrelationKeys = {};
  const authorizer = isObject(context.authorizer) ? context.authorizer : undefined;
  const tenant = text(authorizer?.tenantId) ?? text(authorizer?.tenant);
  if (tenant) keys.tenant = tenant;
  const connectionId = text(context.connectionId);
  if (connectionId) keys.connectionId = connectionId;
  const routeKey = text(context.routeKey);
  if (routeKey) keys.routeKey = routeKey;
  const path = text(event.path);
  const run = path ? RUN_PATH.exec(path) : null;
  const session = path ? SESSION_PATH.exec(path) : null;
  if (run) keys.runId = safeDecode(run[1]!);
  else if (session) keys.sessionKey = safeDecode(session[1]!);
  return keys;
}

function fromExecutionEvent(detail: Json): CorrelationKeys {
  const keys: CorrelationKeys = {};
  const executionArn = text(detail.executionArn);
  if (executionArn) keys.executionArn = executionArn;
  const name = text(detail.name);
  if (name) keys.runId = runIdOfExecution(name);
  return keys;
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
