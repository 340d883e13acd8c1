import type { IncomingMessage, ServerResponse } from "node:http";
import { readBody, sendGatewayError, splitTarget } from "./http";
import { newRestRequestId } from "./ids";
import type { GatewaySettings } from "./types";
import { CLOSE, type ConnectionRegistry } from "./websocket";

/**
 * True for `/{stage}/@connections...`. Clients that escape the `@` (awscurl
 * and hand-built URLs send `%40connections`) reach the same API.
 */
export function isManagementPath(rawPath: string, stage: string): boolean {
  return managementRemainder(rawPath, stage) !== undefined;
}

function managementRemainder(rawPath: string, stage: string): string | undefined {
  for (const prefix of [`/${stage}/@connections`, `/${stage}/%40connections`]) {
    if (rawPath === prefix || rawPath.startsWith(`${prefix}/`)) return rawPath.slice(prefix.length + 1);
  }
  return undefined;
}

/**
 * The API Gateway Management API (`POST|GET|DELETE @connections/{id}`), in
 * the wire format `@aws-sdk/client-apigatewaymanagementapi` expects. The SDK
 * signs with SigV4; any signature is accepted locally.
 */
export async function handleManagementRequest(
  req: IncomingMessage,
  res: ServerResponse,
  settings: GatewaySettings,
  registry: ConnectionRegistry,
): Promise<void> {
  const requestId = newRestRequestId();
  const connectionId = connectionIdOf(splitTarget(req.url ?? "/").rawPath, settings.stage);
  if (connectionId === undefined) {
    req.resume();
    return sendGatewayError(res, 403, "Forbidden", "ForbiddenException", requestId);
  }
  switch (req.method) {
    case "POST":
      return postToConnection(req, res, settings, registry, connectionId, requestId);
    case "GET":
      req.resume();
      return getConnection(res, registry, connectionId, requestId);
    case "DELETE":
      req.resume();
      return deleteConnection(res, registry, connectionId, requestId);
    default:
      req.resume();
      return sendGatewayError(res, 403, "Forbidden", "ForbiddenException", requestId);
  }
}

/** The SDK URL-encodes ids (`=` becomes `%3D`); ids never contain a raw `/`. */
function connectionIdOf(rawPath: string, stage: string): string | undefined {
  const remainder = managementRemainder(rawPath, stage);
  if (remainder === undefined || remainder === "" || remainder.includes("/")) return undefined;
  try {
    return decodeURIComponent(remainder);
  } catch {
    return undefined;
  }
}

async function postToConnection(
  req: IncomingMessage,
  res: ServerResponse,
  settings: GatewaySettings,
  registry: ConnectionRegistry,
  connectionId: string,
  requestId: string,
): Promise<void> {
  const read = await readBody(req, settings.limits.messageBytes);
  if (read.kind === "aborted") return;
  if (read.kind === "tooLarge") {
    return sendGatewayError(res, 413, "Message too long", "PayloadTooLargeException", requestId);
  }
  if (!registry.send(connectionId, read.body)) return sendGone(res, requestId);
  res.writeHead(200, { "x-amzn-RequestId": requestId, "content-length": 0 });
  res.end();
}

function getConnection(res: ServerResponse, registry: ConnectionRegistry, connectionId: string, requestId: string): void {
  const info = registry.info(connectionId);
  if (info === undefined) return sendGone(res, requestId);
  // The wire names are the model's jsonName (lower camel case); the SDK maps them to ConnectedAt etc.
  const body = JSON.stringify({
    connectedAt: new Date(info.connectedAt).toISOString(),
    identity: { sourceIp: info.sourceIp, userAgent: info.userAgent },
    lastActiveAt: new Date(info.lastActiveAt).toISOString(),
  });
  res.writeHead(200, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
    "x-amzn-RequestId": requestId,
  });
  res.end(body);
}

function deleteConnection(res: ServerResponse, registry: ConnectionRegistry, connectionId: string, requestId: string): void {
  // AWS answers at once; the close handshake and $disconnect follow.
  if (!registry.close(connectionId, CLOSE.normal)) return sendGone(res, requestId);
  res.writeHead(204, { "x-amzn-RequestId": requestId });
  res.end();
}

/** Unknown and closed connections look the same: 410, which the SDK raises as GoneException. */
function sendGone(res: ServerResponse, requestId: string): void {
  sendGatewayError(res, 410, "Gone", "GoneException", requestId);
}
