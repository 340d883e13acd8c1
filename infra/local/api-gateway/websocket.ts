import { STATUS_CODES, type IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer, type RawData, type WebSocket } from "ws";
import { FrameSizeGuard } from "./frame-guard";
import { sourceIpOf } from "./http";
import { newGatewayId } from "./ids";
import { invokeAsyncWithRetries } from "./async-invoke";
import { invokeWithTimeout, type InvocationOutcome } from "./invoke";
import type { GatewaySettings, WebSocketEvent, WebSocketHandler, WebSocketHandlerResult } from "./types";
import {
  buildConnectEvent,
  buildDisconnectEvent,
  buildMessageEvent,
  selectRouteKey,
  type ConnectionFacts,
} from "./websocket-events";

const WS_FUNCTION_NAME = "ws-api";
/** How long `closeAll` waits for a client's close frame before dropping the socket. */
const CLOSE_GRACE_MS = 1_000;

/** Close codes and reasons API Gateway uses (RFC 6455 section 7.4.1). */
export const CLOSE = {
  normal: { code: 1000, reason: "Connection Closed Normally" },
  goingAway: { code: 1001, reason: "Going away" },
  unsupportedData: { code: 1003, reason: "Binary frames are not supported" },
  tooBig: { code: 1009, reason: "Message too big" },
} as const;

/** The ws error codes that come with a 1009 close. */
const TOO_BIG_ERRORS: ReadonlySet<string> = new Set(["WS_ERR_UNSUPPORTED_MESSAGE_LENGTH", "WS_ERR_UNSUPPORTED_DATA_PAYLOAD_LENGTH"]);

export interface CloseIntent {
  code: number;
  reason: string;
}

interface Connection {
  facts: ConnectionFacts;
  ws: WebSocket;
  lastActiveAt: number;
  /** Set when the gateway closes the connection, so $disconnect reports the gateway's code, not the client's echo. */
  closeIntent?: CloseIntent;
  idleTimer: NodeJS.Timeout;
  lifetimeTimer: NodeJS.Timeout;
}

export interface ConnectionInfo {
  connectedAt: number;
  lastActiveAt: number;
  sourceIp: string;
  userAgent: string | undefined;
}

/** What the management API needs from the WebSocket side. */
export interface ConnectionRegistry {
  info(connectionId: string): ConnectionInfo | undefined;
  /** False when the connection is unknown or already closing. */
  send(connectionId: string, data: Buffer): boolean;
  close(connectionId: string, intent: CloseIntent): boolean;
}

/**
 * The WebSocket API: `$connect` decides the upgrade, text messages are routed
 * and dispatched concurrently, and each connection gets exactly one
 * `$disconnect`, whoever closes it.
 */
export class WebSocketGateway implements ConnectionRegistry {
  private readonly connections = new Map<string, Connection>();
  private readonly pendingUpgrades = new Set<Duplex>();
  private readonly disconnects = new Set<Promise<void>>();
  /** Asynchronous message invocations running or waiting for a retry. */
  private readonly asyncDispatches = new Set<Promise<void>>();
  private readonly chosenProtocols = new WeakMap<IncomingMessage, string>();
  private readonly routes: ReadonlySet<string>;
  private readonly server: WebSocketServer;
  private closing = false;

  constructor(
    private readonly settings: GatewaySettings,
    private readonly handler: WebSocketHandler,
    routes: string[],
  ) {
    this.routes = new Set(routes);
    this.server = new WebSocketServer({
      noServer: true,
      clientTracking: false,
      maxPayload: settings.limits.messageBytes,
      // API Gateway does not negotiate permessage-deflate; wire size is message size.
      perMessageDeflate: false,
      // AWS echoes a subprotocol only when the $connect integration returns one.
      handleProtocols: (_offered, req) => this.chosenProtocols.get(req) ?? false,
    });
  }

  connectionCount(): number {
    return this.connections.size;
  }

  async asyncIdle(): Promise<void> {
    while (this.asyncDispatches.size > 0) await Promise.all(this.asyncDispatches);
  }

  async handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    // A reset during $connect must not crash the process; ws adds its own handler later.
    socket.on("error", () => undefined);
    if (this.closing) return rejectUpgrade(socket, 503);
    this.pendingUpgrades.add(socket);
    const facts: ConnectionFacts = {
      connectionId: newGatewayId(),
      connectedAt: Date.now(),
      domainName: req.headers.host ?? "localhost",
      sourceIp: sourceIpOf(req),
      userAgent: req.headers["user-agent"],
    };
    const connectEvent = buildConnectEvent(req, this.settings, facts);
    const denied = await this.authorizeConnect(connectEvent, facts);
    if (denied) {
      this.pendingUpgrades.delete(socket);
      return rejectUpgrade(socket, denied.statusCode, denied.message);
    }
    const outcome = await this.invoke(buildConnectEvent(req, this.settings, facts));
    this.pendingUpgrades.delete(socket);
    if (socket.destroyed || this.closing) return rejectUpgrade(socket, 503);
    const decision = connectDecision(outcome);
    if (decision.kind === "reject") return rejectUpgrade(socket, decision.statusCode, decision.message);
    if (decision.protocol !== undefined) this.chosenProtocols.set(req, decision.protocol);
    this.server.handleUpgrade(req, socket, head, (ws) => this.attach(ws, socket, facts));
  }

  /** The $connect authorizer, if the route has one: its context joins the connection's facts (every later event carries it). */
  private async authorizeConnect(event: WebSocketEvent, facts: ConnectionFacts): Promise<{ statusCode: number; message: string } | undefined> {
    const authorizer = this.settings.connectAuthorizer;
    if (!authorizer) return undefined;
    const { settings } = this;
    const methodArn = `arn:aws:execute-api:${settings.region}:${settings.accountId}:${settings.apiId}/${settings.stage}/$connect`;
    const decision = await authorizer.authorize({ headers: event.headers ?? {}, query: event.queryStringParameters ?? null, methodArn, event: { type: "REQUEST", ...event } });
    if (decision.kind === "deny") return decision;
    facts.authorizer = decision.authorizer;
    return undefined;
  }

  info(connectionId: string): ConnectionInfo | undefined {
    const conn = this.openConnection(connectionId);
    if (conn === undefined) return undefined;
    const { connectedAt, sourceIp, userAgent } = conn.facts;
    return { connectedAt, lastActiveAt: conn.lastActiveAt, sourceIp, userAgent };
  }

  send(connectionId: string, data: Buffer): boolean {
    const conn = this.openConnection(connectionId);
    if (conn === undefined) return false;
    // Management API posts arrive as text frames, bytes untouched. AWS would
    // split anything over 32 KB into continuation frames; one frame is
    // equivalent for every client, so no fragmentation here.
    conn.ws.send(data, { binary: false });
    return true;
  }

  close(connectionId: string, intent: CloseIntent): boolean {
    const conn = this.openConnection(connectionId);
    if (conn === undefined) return false;
    closeWith(conn, intent);
    return true;
  }

  /** Closes every connection, waits for their $disconnect invocations, and refuses new ones. */
  async closeAll(): Promise<void> {
    this.closing = true;
    for (const socket of this.pendingUpgrades) socket.destroy();
    await Promise.all([...this.connections.values()].map((conn) => closeAndWait(conn, CLOSE.goingAway)));
    await Promise.all(this.disconnects);
    this.server.close();
  }

  /** Connections the client may still be reached on; a closing one is already gone to AWS. */
  private openConnection(connectionId: string): Connection | undefined {
    const conn = this.connections.get(connectionId);
    return conn !== undefined && conn.closeIntent === undefined && conn.ws.readyState === conn.ws.OPEN ? conn : undefined;
  }

  private attach(ws: WebSocket, socket: Duplex, facts: ConnectionFacts): void {
    const { idleTimeoutMs, maxConnectionMs } = this.settings.limits;
    const conn: Connection = {
      facts,
      ws,
      lastActiveAt: facts.connectedAt,
      idleTimer: setTimeout(() => closeWith(conn, CLOSE.goingAway), idleTimeoutMs).unref(),
      lifetimeTimer: setTimeout(() => closeWith(conn, CLOSE.goingAway), maxConnectionMs).unref(),
    };
    this.connections.set(facts.connectionId, conn);
    this.guardFrameSize(conn, socket);
    ws.on("message", (data, isBinary) => this.onMessage(conn, data, isBinary));
    ws.on("error", (error: Error & { code?: string }) => {
      // ws has already sent 1009 for a message over maxPayload; record it for $disconnect.
      if (error.code !== undefined && TOO_BIG_ERRORS.has(error.code)) conn.closeIntent ??= CLOSE.tooBig;
    });
    ws.once("close", (code, reason) => this.onClosed(conn, code, reason.toString("utf8")));
  }

  /** Checks frame sizes on the raw bytes ahead of ws, which sees them next. */
  private guardFrameSize(conn: Connection, socket: Duplex): void {
    const guard = new FrameSizeGuard(this.settings.limits.frameBytes);
    const onData = (chunk: Buffer): void => {
      if (guard.feed(chunk) === undefined) return;
      socket.off("data", onData);
      closeWith(conn, CLOSE.tooBig);
    };
    socket.prependListener("data", onData);
  }

  private onMessage(conn: Connection, data: RawData, isBinary: boolean): void {
    // Frames still parsed after the gateway decided to close are dropped, as AWS would.
    if (conn.closeIntent !== undefined) return;
    if (isBinary) return closeWith(conn, CLOSE.unsupportedData);
    conn.lastActiveAt = Date.now();
    conn.idleTimer.refresh();
    const body = rawDataToBuffer(data).toString("utf8");
    const event = buildMessageEvent(this.settings, conn.facts, selectRouteKey(body, this.routes), body);
    // Not awaited: AWS invokes the integration per message, in parallel.
    void this.dispatchMessage(conn, event);
  }

  private async dispatchMessage(conn: Connection, event: WebSocketEvent): Promise<void> {
    const async = this.settings.webSocketAsyncInvocation;
    if (async) {
      // Asynchronous invocation: nobody waits, and failures never reach the client; Lambda retries them.
      // The wait is a little longer than the function's timeout, so its own Sandbox.Timedout is what ends it.
      const done = invokeAsyncWithRetries(() => this.invoke(event, async.functionTimeoutMs + 1000), {
        maxRetryAttempts: async.maxRetryAttempts ?? 2,
        retryDelayMs: async.retryDelayMs ?? 1000,
        onRetriesExhausted: (error, attempts) => async.onRetriesExhausted?.(event, error, attempts),
      });
      this.asyncDispatches.add(done);
      await done.finally(() => this.asyncDispatches.delete(done));
      return;
    }
    const outcome = await this.invoke(event);
    if (outcome.kind === "returned") return;
    // Without a route response AWS still tells the client when the integration failed.
    const message = outcome.kind === "timedOut" ? "Endpoint request timed out" : "Internal server error";
    const { connectionId, requestId } = event.requestContext;
    if (conn.ws.readyState === conn.ws.OPEN) conn.ws.send(JSON.stringify({ message, connectionId, requestId }));
  }

  private onClosed(conn: Connection, code: number, reason: string): void {
    clearTimeout(conn.idleTimer);
    clearTimeout(conn.lifetimeTimer);
    this.connections.delete(conn.facts.connectionId);
    const intent = conn.closeIntent ?? { code, reason };
    const event = buildDisconnectEvent(this.settings, conn.facts, intent.code, intent.reason);
    // $disconnect is best effort in AWS: its result and errors change nothing.
    const done = this.invoke(event).then(() => undefined);
    this.disconnects.add(done);
    void done.finally(() => this.disconnects.delete(done));
  }

  private invoke(event: WebSocketEvent, timeoutMs = this.settings.limits.integrationTimeoutMs): Promise<InvocationOutcome<WebSocketHandlerResult | void>> {
    const context = this.settings.createContext(WS_FUNCTION_NAME, timeoutMs);
    return invokeWithTimeout((progress) => this.handler(event, context, progress), timeoutMs);
  }
}

type ConnectDecision =
  | { kind: "accept"; protocol: string | undefined }
  | { kind: "reject"; statusCode: number; message?: string };

/**
 * A 2xx from $connect accepts the upgrade; any other status is the HTTP
 * answer the client gets. Returning nothing accepts too (there is no status
 * to reject with). Failures answer 500, a timeout 504.
 */
export function connectDecision(outcome: InvocationOutcome<WebSocketHandlerResult | void>): ConnectDecision {
  if (outcome.kind === "timedOut") return { kind: "reject", statusCode: 504, message: "Endpoint request timed out" };
  if (outcome.kind === "threw") return { kind: "reject", statusCode: 500, message: "Internal server error" };
  const result: unknown = outcome.value;
  if (result === undefined || result === null) return { kind: "accept", protocol: undefined };
  const statusCode = (result as { statusCode?: unknown }).statusCode;
  if (typeof statusCode !== "number" || !Number.isInteger(statusCode) || statusCode < 100 || statusCode > 599) {
    return { kind: "reject", statusCode: 500, message: "Internal server error" };
  }
  if (statusCode < 200 || statusCode > 299) return { kind: "reject", statusCode };
  return { kind: "accept", protocol: findHeader((result as WebSocketHandlerResult).headers, "sec-websocket-protocol") };
}

function findHeader(headers: Record<string, string> | undefined, lowerName: string): string | undefined {
  if (headers === undefined) return undefined;
  return Object.entries(headers).find(([name]) => name.toLowerCase() === lowerName)?.[1];
}

function rejectUpgrade(socket: Duplex, statusCode: number, message?: string): void {
  if (socket.destroyed) return;
  const body = message === undefined ? "" : JSON.stringify({ message });
  const head = [
    `HTTP/1.1 ${statusCode} ${STATUS_CODES[statusCode] ?? "Unknown"}`,
    "Connection: close",
    "Content-Type: application/json",
    `Content-Length: ${Buffer.byteLength(body)}`,
  ];
  socket.end(`${head.join("\r\n")}\r\n\r\n${body}`);
}

/** The first reason to close wins; later ones (say, idle during a 1009 close) change nothing. */
function closeWith(conn: Connection, intent: CloseIntent): void {
  conn.closeIntent ??= intent;
  if (conn.ws.readyState === conn.ws.OPEN) conn.ws.close(intent.code, intent.reason);
}

function closeAndWait(conn: Connection, intent: CloseIntent): Promise<void> {
  if (conn.ws.readyState === conn.ws.CLOSED) return Promise.resolve();
  return new Promise((resolve) => {
    const drop = setTimeout(() => conn.ws.terminate(), CLOSE_GRACE_MS);
    conn.ws.once("close", () => {
      clearTimeout(drop);
      resolve();
    });
    closeWith(conn, intent);
  });
}

function rawDataToBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}
