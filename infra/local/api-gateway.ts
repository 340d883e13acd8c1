/**
 * Loopback stand-in for API Gateway: one HTTP server carrying the REST API,
 * the WebSocket API and the WebSocket Management API, invoking the same
 * Lambda handlers that run in AWS with events shaped like AWS's.
 *
 * Local addressing (differs from AWS, where each API has its own domain):
 * - REST: every path except the two below, with no stage prefix, so
 *   `POST ${restUrl}/v1/agent` reaches the handler. `requestContext.path`
 *   still carries the stage (`/local/v1/agent`), as in AWS.
 * - WebSocket: `ws://host:port/ws` (`webSocketUrl`).
 * - Management API: `http://host:port/{stage}/@connections/{id}`; pass
 *   `managementEndpoint` as `endpoint` to `ApiGatewayManagementApiClient`.
 *
 * Deliberate simplifications are noted where they happen: PostToConnection
 * payloads go out as one frame (AWS fragments at 32 KB), REST bodies count as
 * binary when they are not UTF-8 (AWS uses the API's binaryMediaTypes), only
 * inbound data messages keep a connection from idling out.
 */
import { listen } from "./listen";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { sendGatewayError, splitTarget } from "./api-gateway/http";
import { newApiId, newRestRequestId } from "./api-gateway/ids";
import { defaultLambdaContext } from "./api-gateway/invoke";
import { handleManagementRequest, isManagementPath } from "./api-gateway/management";
import { handleRestRequest } from "./api-gateway/rest";
import { serveStaticFile, staticSiteOf } from "./api-gateway/static-site";
import {
  DEFAULT_LIMITS,
  type GatewaySettings,
  type LocalApiGateway,
  type LocalApiGatewayLimits,
  type LocalApiGatewayOptions,
  type LocalRestRoute,
} from "./api-gateway/types";
import { WebSocketGateway } from "./api-gateway/websocket";

export { LocalAuthorizer, type AuthorizerSpec } from "./api-gateway/authorizer";
export type {
  LocalRestRoute,
  LocalApiGateway,
  LocalApiGatewayLimits,
  LocalApiGatewayOptions,
  RestHandler,
  WebSocketEvent,
  WebSocketHandler,
  WebSocketHandlerResult,
  WebSocketRequestContext,
} from "./api-gateway/types";

const WEBSOCKET_PATH = "/ws";

/** What CDK's `LambdaRestApi` (proxy: true) builds. */
const DEFAULT_REST_ROUTES: LocalRestRoute[] = [
  { resourcePath: "/", httpMethod: "ANY" },
  { resourcePath: "/{proxy+}", httpMethod: "ANY" },
];

export async function startLocalApiGateway(options: LocalApiGatewayOptions): Promise<LocalApiGateway> {
  const host = options.host ?? "127.0.0.1";
  const settings: GatewaySettings = {
    stage: options.stage,
    apiId: newApiId(),
    webSocketPath: WEBSOCKET_PATH,
    limits: resolveLimits(options.limits),
    createContext: options.createContext ?? defaultLambdaContext,
    webSocketAsyncInvocation: options.webSocketAsyncInvocation,
    restRoutes: options.restRoutes ?? DEFAULT_REST_ROUTES,
    gatewayResponses: options.gatewayResponses ?? {},
    connectAuthorizer: options.connectAuthorizer,
    region: process.env.AWS_REGION ?? "us-east-1",
    accountId: "000000000000",
  };
  const webSocket = new WebSocketGateway(settings, options.webSocketHandler, options.webSocketRoutes);
  const server = createServer((req, res) => {
    handleHttpRequest(req, res, settings, options, webSocket).catch(() => answerUnexpectedFailure(res));
  });
  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    // `/` too: OpenClaw's CLI in local addressing (OPENCLAW_GATEWAY_PORT) connects to the root path,
    // and an upgrade request is never a REST call.
    if (isWebSocketPath(req, settings) || splitTarget(req.url ?? "/").rawPath === "/") void webSocket.handleUpgrade(req, socket, head);
    else socket.end("HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
  });
  const port = await listen(server, host, options.port);
  const origin = `${formatHost(host)}:${port}`;
  return {
    restUrl: `http://${origin}`,
    webSocketUrl: `ws://${origin}${WEBSOCKET_PATH}`,
    managementEndpoint: `http://${origin}/${options.stage}`,
    connectionCount: () => webSocket.connectionCount(),
    asyncIdle: () => webSocket.asyncIdle(),
    close: () => closeGateway(server, webSocket),
  };
}

async function handleHttpRequest(
  req: IncomingMessage,
  res: ServerResponse,
  settings: GatewaySettings,
  options: LocalApiGatewayOptions,
  webSocket: WebSocketGateway,
): Promise<void> {
  const { rawPath } = splitTarget(req.url ?? "/");
  if (isManagementPath(rawPath, settings.stage)) return handleManagementRequest(req, res, settings, webSocket);
  // Not API Gateway: what the console's CloudFront distribution serves in AWS (infra/console-site.ts).
  const site = staticSiteOf(rawPath, options.staticSites ?? []);
  if (site) return serveStaticFile(req, res, site);
  if (isWebSocketPath(req, settings)) {
    req.resume();
    return sendGatewayError(res, 426, "Upgrade Required", undefined, newRestRequestId());
  }
  return handleRestRequest(req, res, settings, options.restHandler);
}

function isWebSocketPath(req: IncomingMessage, settings: GatewaySettings): boolean {
  const { rawPath } = splitTarget(req.url ?? "/");
  return rawPath === settings.webSocketPath || rawPath.startsWith(`${settings.webSocketPath}/`);
}

/** A bug in this emulator, not in a handler; answer like AWS's own failures rather than hang. */
function answerUnexpectedFailure(res: ServerResponse): void {
  if (res.headersSent) res.destroy();
  else sendGatewayError(res, 500, "Internal server error", "InternalServerErrorException", newRestRequestId());
}

function resolveLimits(limits: LocalApiGatewayLimits | undefined): Required<LocalApiGatewayLimits> {
  const given = Object.entries(limits ?? {}).filter(([, value]) => value !== undefined);
  return { ...DEFAULT_LIMITS, ...Object.fromEntries(given) };
}


function formatHost(host: string): string {
  return host.includes(":") ? `[${host}]` : host;
}

/** WebSockets first, so every $disconnect runs while handlers can still reach the management API. */
async function closeGateway(server: Server, webSocket: WebSocketGateway): Promise<void> {
  await webSocket.closeAll();
  const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeAllConnections();
  await stopped;
}
