import {
  ApiGatewayManagementApiClient,
  DeleteConnectionCommand,
  GetConnectionCommand,
  GoneException,
  PayloadTooLargeException,
  PostToConnectionCommand,
} from "@aws-sdk/client-apigatewaymanagementapi";
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from "aws-lambda";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import {
  startLocalApiGateway,
  type LocalApiGateway,
  type LocalApiGatewayOptions,
  type RestHandler,
  type WebSocketEvent,
  type WebSocketHandler,
} from "../../infra/local/api-gateway";
import { FrameSizeGuard } from "../../infra/local/api-gateway/frame-guard";

// ---------------------------------------------------------------- harness

const started: LocalApiGateway[] = [];
const sdkClients: ApiGatewayManagementApiClient[] = [];
const sockets: WebSocket[] = [];

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.terminate();
  for (const client of sdkClients.splice(0)) client.destroy();
  await Promise.all(started.splice(0).map((gateway) => gateway.close()));
});

const okRest: RestHandler = async () => ({ statusCode: 200, body: "{}" });

/** Records every WebSocket event; `onEvent` decides the answer (default 200). */
function recordingWebSocketHandler(onEvent?: WebSocketHandler): { handler: WebSocketHandler; events: WebSocketEvent[] } {
  const events: WebSocketEvent[] = [];
  const handler: WebSocketHandler = async (event, context) => {
    events.push(event);
    return onEvent === undefined ? { statusCode: 200 } : onEvent(event, context);
  };
  return { handler, events };
}

async function startGateway(overrides: Partial<LocalApiGatewayOptions> = {}): Promise<LocalApiGateway> {
  const gateway = await startLocalApiGateway({
    port: 0,
    stage: "local",
    restHandler: okRest,
    webSocketHandler: recordingWebSocketHandler().handler,
    webSocketRoutes: ["agent.run", "agent.slow"],
    ...overrides,
  });
  started.push(gateway);
  return gateway;
}

function managementClient(gateway: LocalApiGateway): ApiGatewayManagementApiClient {
  const client = new ApiGatewayManagementApiClient({
    endpoint: gateway.managementEndpoint,
    region: "us-east-1",
    credentials: { accessKeyId: "local", secretAccessKey: "local" },
  });
  sdkClients.push(client);
  return client;
}

interface TestSocket {
  ws: WebSocket;
  messages: string[];
  closed: Promise<{ code: number; reason: string }>;
}

function connect(url: string, headers: Record<string, string> = {}): Promise<TestSocket> {
  const ws = new WebSocket(url, { headers });
  sockets.push(ws);
  // Errors after the handshake (a terminate in cleanup, say) are not what these tests assess.
  ws.on("error", () => undefined);
  const messages: string[] = [];
  ws.on("message", (data) => messages.push(data.toString()));
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on("close", (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  return new Promise((resolve, reject) => {
    ws.once("open", () => resolve({ ws, messages, closed }));
    ws.once("unexpected-response", (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
  });
}

/** Resolves with the HTTP status of a refused upgrade. */
function connectRefused(url: string): Promise<number> {
  const ws = new WebSocket(url);
  sockets.push(ws);
  ws.on("error", () => undefined);
  return new Promise((resolve, reject) => {
    ws.once("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
    ws.once("open", () => reject(new Error("upgrade was accepted")));
  });
}

async function waitFor<T>(probe: () => T | undefined | false, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const connectionIdOf = (events: WebSocketEvent[]): string =>
  events.find((event) => event.requestContext.eventType === "CONNECT")!.requestContext.connectionId;

const disconnectsOf = (events: WebSocketEvent[]): WebSocketEvent[] =>
  events.filter((event) => event.requestContext.eventType === "DISCONNECT");

// ---------------------------------------------------------------- REST

describe("REST API proxy integration", () => {
  it("builds a payload format 1.0 event and maps the result back", async () => {
    // Prepare
    let seen: APIGatewayProxyEvent | undefined;
    const gateway = await startGateway({
      restHandler: async (event): Promise<APIGatewayProxyResult> => {
        seen = event;
        return {
          statusCode: 201,
          headers: { "X-One": "1", "Content-Type": "text/plain" },
          multiValueHeaders: { "Set-Cookie": ["a=1", "b=2"] },
          body: "created",
        };
      },
    });

    // Act
    const sentAt = Date.now();
    const res = await fetch(`${gateway.restUrl}/v1/agent?x=1&x=2&y=hello%20there`, {
      method: "POST",
      headers: { "X-Custom": "abc", "User-Agent": "rest-test", "Content-Type": "application/json" },
      body: JSON.stringify({ prompt: "hi" }),
    });

    // Assess
    expect(res.status).toBe(201);
    expect(await res.text()).toBe("created");
    expect(res.headers.get("x-one")).toBe("1");
    expect(res.headers.get("content-type")).toBe("text/plain");
    expect(res.headers.getSetCookie()).toEqual(["a=1", "b=2"]);
    expect(res.headers.get("x-amzn-requestid")).toBe(seen?.requestContext.requestId);
    expect(seen).toMatchObject({
      resource: "/{proxy+}",
      path: "/v1/agent",
      httpMethod: "POST",
      pathParameters: { proxy: "v1/agent" },
      stageVariables: null,
      queryStringParameters: { x: "2", y: "hello there" },
      multiValueQueryStringParameters: { x: ["1", "2"], y: ["hello there"] },
      body: JSON.stringify({ prompt: "hi" }),
      isBase64Encoded: false,
      requestContext: {
        stage: "local",
        httpMethod: "POST",
        path: "/local/v1/agent",
        resourcePath: "/{proxy+}",
        identity: { sourceIp: "127.0.0.1", userAgent: "rest-test" },
      },
    });
    expect(seen?.headers["X-Custom"]).toBe("abc");
    expect(seen?.multiValueHeaders["X-Custom"]).toEqual(["abc"]);
    expect(seen?.requestContext.requestId).toMatch(/^[0-9a-f-]{36}$/);
    // Stamped while the request was in flight (bounds from both sides, however slow the machine).
    expect(seen?.requestContext.requestTimeEpoch).toBeGreaterThanOrEqual(sentAt);
    expect(seen?.requestContext.requestTimeEpoch).toBeLessThanOrEqual(Date.now());
  });

  it("treats the root as its own resource, with nulls for absent parts", async () => {
    // Prepare
    let seen: APIGatewayProxyEvent | undefined;
    const gateway = await startGateway({
      restHandler: async (event) => {
        seen = event;
        return { statusCode: 204, body: "" };
      },
    });

    // Act
    const res = await fetch(`${gateway.restUrl}/`);

    // Assess
    expect(res.status).toBe(204);
    expect(seen).toMatchObject({
      resource: "/",
      path: "/",
      pathParameters: null,
      queryStringParameters: null,
      multiValueQueryStringParameters: null,
      body: null,
      isBase64Encoded: false,
    });
  });

  it("base64-encodes binary request bodies and decodes base64 results", async () => {
    // Prepare
    const bytes = Buffer.from([0xff, 0x00, 0xfe, 0x80]);
    let seen: APIGatewayProxyEvent | undefined;
    const gateway = await startGateway({
      restHandler: async (event) => {
        seen = event;
        return { statusCode: 200, body: Buffer.from([1, 2, 3]).toString("base64"), isBase64Encoded: true };
      },
    });

    // Act
    const res = await fetch(`${gateway.restUrl}/upload`, { method: "PUT", body: bytes });

    // Assess
    expect(seen?.isBase64Encoded).toBe(true);
    expect(seen?.body).toBe(bytes.toString("base64"));
    expect(Buffer.from(await res.arrayBuffer())).toEqual(Buffer.from([1, 2, 3]));
  });

  it("answers 502 when the handler throws or returns a malformed result", async () => {
    // Prepare
    const gateway = await startGateway({
      restHandler: async (event) => {
        if (event.path === "/throw") throw new Error("boom");
        return { statusCode: 200, body: { not: "a string" } } as unknown as APIGatewayProxyResult;
      },
    });

    // Act
    const thrown = await fetch(`${gateway.restUrl}/throw`);
    const malformed = await fetch(`${gateway.restUrl}/malformed`);

    // Assess
    for (const res of [thrown, malformed]) {
      expect(res.status).toBe(502);
      expect(await res.json()).toEqual({ message: "Internal server error" });
    }
  });

  it("answers 504 past the integration timeout", async () => {
    // Prepare
    const gateway = await startGateway({
      limits: { integrationTimeoutMs: 50 },
      restHandler: () => new Promise((resolve) => setTimeout(() => resolve({ statusCode: 200, body: "" }), 500)),
    });

    // Act
    const res = await fetch(`${gateway.restUrl}/slow`);

    // Assess
    expect(res.status).toBe(504);
    expect(await res.json()).toEqual({ message: "Endpoint request timed out" });
  });

  it("answers 413 for payloads over 10 MB without invoking the handler", async () => {
    // Prepare
    let invoked = false;
    const gateway = await startGateway({
      restHandler: async () => {
        invoked = true;
        return { statusCode: 200, body: "" };
      },
    });

    // Act
    const res = await fetch(`${gateway.restUrl}/big`, { method: "POST", body: Buffer.alloc(10 * 1024 * 1024 + 1, 97) });

    // Assess
    expect(res.status).toBe(413);
    expect(invoked).toBe(false);
  });
});

// ---------------------------------------------------------------- WebSocket

describe("WebSocket API", () => {
  it("accepts a connection when $connect answers 2xx, with an AWS-shaped event", async () => {
    // Prepare
    const { handler, events } = recordingWebSocketHandler();
    const gateway = await startGateway({ webSocketHandler: handler });

    // Act
    await connect(`${gateway.webSocketUrl}?token=abc`, { "User-Agent": "ws-test", "X-Client": "cli" });

    // Assess
    expect(gateway.connectionCount()).toBe(1);
    const [event] = events;
    expect(event).toMatchObject({
      isBase64Encoded: false,
      queryStringParameters: { token: "abc" },
      multiValueQueryStringParameters: { token: ["abc"] },
      requestContext: {
        routeKey: "$connect",
        eventType: "CONNECT",
        messageId: undefined,
        stage: "local",
        messageDirection: "IN",
        identity: { sourceIp: "127.0.0.1", userAgent: "ws-test" },
      },
    });
    expect(event.headers?.["X-Client"]).toBe("cli");
    expect(event.multiValueHeaders?.["X-Client"]).toEqual(["cli"]);
    expect(event.requestContext.connectionId).toMatch(/^[A-Za-z0-9+/]{15}=$/);
    expect(event.requestContext.apiId).toMatch(/^[a-z0-9]{10}$/);
    expect(event.requestContext.domainName).toBe(new URL(gateway.webSocketUrl).host);
  });

  it("echoes a subprotocol only when $connect returns it, as AWS does", async () => {
    // Prepare
    const { handler } = recordingWebSocketHandler(async () => ({
      statusCode: 200,
      headers: { "Sec-WebSocket-Protocol": "agent.v1" },
    }));
    const gateway = await startGateway({ webSocketHandler: handler });
    const ws = new WebSocket(gateway.webSocketUrl, ["other", "agent.v1"]);
    sockets.push(ws);

    // Act
    await new Promise((resolve, reject) => {
      ws.once("open", resolve);
      ws.once("error", reject);
    });

    // Assess
    expect(ws.protocol).toBe("agent.v1");
  });

  it("refuses the upgrade with the $connect status, and 500 when $connect throws", async () => {
    // Prepare
    const { handler } = recordingWebSocketHandler(async (event) => {
      if (event.queryStringParameters?.mode === "throw") throw new Error("boom");
      return { statusCode: 403 };
    });
    const gateway = await startGateway({ webSocketHandler: handler });

    // Act
    const forbidden = await connectRefused(`${gateway.webSocketUrl}?mode=deny`);
    const failed = await connectRefused(`${gateway.webSocketUrl}?mode=throw`);

    // Assess
    expect(forbidden).toBe(403);
    expect(failed).toBe(500);
    expect(gateway.connectionCount()).toBe(0);
  });

  it("routes on the body's method, falling back to $default for unknown methods and non-JSON", async () => {
    // Prepare
    const { handler, events } = recordingWebSocketHandler();
    const gateway = await startGateway({ webSocketHandler: handler });
    const client = await connect(gateway.webSocketUrl);
    const bodies = ['{"method":"agent.run","id":1}', '{"method":"agent.unknown"}', "not json", '{"method":42}'];

    // Act
    for (const body of bodies) client.ws.send(body);
    const messages = await waitFor(() => {
      const found = events.filter((event) => event.requestContext.eventType === "MESSAGE");
      return found.length === bodies.length && found;
    });

    // Assess
    const routeOf = (body: string): string | undefined => messages.find((event) => event.body === body)?.requestContext.routeKey;
    expect(routeOf(bodies[0])).toBe("agent.run");
    expect(routeOf(bodies[1])).toBe("$default");
    expect(routeOf(bodies[2])).toBe("$default");
    expect(routeOf(bodies[3])).toBe("$default");
    const messageIds = new Set(messages.map((event) => event.requestContext.messageId));
    expect(messageIds.size).toBe(bodies.length);
    expect(messages[0].requestContext.connectionId).toBe(connectionIdOf(events));
  });

  it("runs message handlers concurrently, so a slow one does not hold back the next frame", async () => {
    // Prepare
    let releaseSlow: () => void = () => undefined;
    const slowGate = new Promise<void>((resolve) => (releaseSlow = resolve));
    const { handler, events } = recordingWebSocketHandler(async (event) => {
      if (event.requestContext.routeKey === "agent.slow") await slowGate;
      return { statusCode: 200 };
    });
    const gateway = await startGateway({ webSocketHandler: handler });
    const client = await connect(gateway.webSocketUrl);

    // Act
    client.ws.send('{"method":"agent.slow"}');
    client.ws.send('{"method":"agent.run"}');

    // Assess
    const fast = await waitFor(() => events.find((event) => event.requestContext.routeKey === "agent.run"));
    expect(fast.body).toBe('{"method":"agent.run"}');
    releaseSlow();
  });

  it("tells the client when a message integration fails", async () => {
    // Prepare
    const { handler, events } = recordingWebSocketHandler(async (event) => {
      if (event.requestContext.eventType === "MESSAGE") throw new Error("boom");
      return { statusCode: 200 };
    });
    const gateway = await startGateway({ webSocketHandler: handler });
    const client = await connect(gateway.webSocketUrl);

    // Act
    client.ws.send("hello");

    // Assess
    const [reply] = await waitFor(() => client.messages.length > 0 && client.messages);
    expect(JSON.parse(reply)).toMatchObject({ message: "Internal server error", connectionId: connectionIdOf(events) });
  });

  it("closes with 1009 for a message over messageBytes and for a frame over frameBytes", async () => {
    // Prepare
    const { handler, events } = recordingWebSocketHandler();
    const gateway = await startGateway({ webSocketHandler: handler, limits: { messageBytes: 1024, frameBytes: 512 } });
    const fragmented = await connect(gateway.webSocketUrl);
    const oneBigFrame = await connect(gateway.webSocketUrl);

    // Act
    for (let i = 0; i < 3; i++) fragmented.ws.send("x".repeat(400), { fin: false });
    fragmented.ws.send("x".repeat(400), { fin: true });
    oneBigFrame.ws.send("y".repeat(600));

    // Assess
    expect((await fragmented.closed).code).toBe(1009);
    expect((await oneBigFrame.closed).code).toBe(1009);
    const disconnects = await waitFor(() => disconnectsOf(events).length === 2 && disconnectsOf(events));
    expect(disconnects.map((event) => event.requestContext.disconnectStatusCode)).toEqual([1009, 1009]);
    expect(events.some((event) => event.requestContext.eventType === "MESSAGE")).toBe(false);
  });

  it("accepts a message split into frames that each fit, up to messageBytes", async () => {
    // Prepare
    const { handler, events } = recordingWebSocketHandler();
    const gateway = await startGateway({ webSocketHandler: handler, limits: { messageBytes: 1024, frameBytes: 512 } });
    const client = await connect(gateway.webSocketUrl);

    // Act
    client.ws.send("a".repeat(500), { fin: false });
    client.ws.send("b".repeat(500), { fin: true });

    // Assess
    const message = await waitFor(() => events.find((event) => event.requestContext.eventType === "MESSAGE"));
    expect(message.body).toBe("a".repeat(500) + "b".repeat(500));
  });

  it("closes idle connections with 1001 Going away and reports it in $disconnect", async () => {
    // Prepare
    const { handler, events } = recordingWebSocketHandler();
    const gateway = await startGateway({ webSocketHandler: handler, limits: { idleTimeoutMs: 100 } });
    const client = await connect(gateway.webSocketUrl);

    // Act
    const closed = await client.closed;

    // Assess
    expect(closed).toEqual({ code: 1001, reason: "Going away" });
    const [disconnect] = await waitFor(() => disconnectsOf(events).length > 0 && disconnectsOf(events));
    expect(disconnect.requestContext).toMatchObject({
      routeKey: "$disconnect",
      eventType: "DISCONNECT",
      disconnectStatusCode: 1001,
      disconnectReason: "Going away",
      connectionId: connectionIdOf(events),
    });
    expect(gateway.connectionCount()).toBe(0);
  });

  it("closes connections at the maximum duration even while they are active", async () => {
    // Prepare
    const gateway = await startGateway({ limits: { idleTimeoutMs: 100, maxConnectionMs: 250 } });
    const client = await connect(gateway.webSocketUrl);
    const keepAlive = setInterval(() => client.ws.send("ping"), 30);

    // Act
    const closed = await client.closed;
    clearInterval(keepAlive);

    // Assess
    expect(closed.code).toBe(1001);
  });

  it("closes with 1003 on binary frames, which API Gateway does not accept", async () => {
    // Prepare
    const gateway = await startGateway();
    const client = await connect(gateway.webSocketUrl);

    // Act
    client.ws.send(Buffer.from([1, 2, 3]), { binary: true });

    // Assess
    expect((await client.closed).code).toBe(1003);
  });

  it("fires $disconnect once when the client closes, with the client's code and reason", async () => {
    // Prepare
    const { handler, events } = recordingWebSocketHandler();
    const gateway = await startGateway({ webSocketHandler: handler });
    const client = await connect(gateway.webSocketUrl);

    // Act
    client.ws.close(4000, "bye");
    await client.closed;

    // Assess
    const [disconnect] = await waitFor(() => disconnectsOf(events).length > 0 && disconnectsOf(events));
    expect(disconnect.requestContext).toMatchObject({ disconnectStatusCode: 4000, disconnectReason: "bye" });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(disconnectsOf(events)).toHaveLength(1);
  });

  it("close() closes every socket, runs $disconnect and stops listening", async () => {
    // Prepare
    const { handler, events } = recordingWebSocketHandler();
    const gateway = await startLocalApiGateway({
      port: 0,
      stage: "local",
      restHandler: okRest,
      webSocketHandler: handler,
      webSocketRoutes: [],
    });
    const client = await connect(gateway.webSocketUrl);

    // Act
    await gateway.close();

    // Assess
    expect((await client.closed).code).toBe(1001);
    expect(disconnectsOf(events)).toHaveLength(1);
    expect(gateway.connectionCount()).toBe(0);
    await expect(fetch(`${gateway.restUrl}/`)).rejects.toThrow();
  });
});

// ---------------------------------------------------------------- Management API

describe("Management API with the real SDK client", () => {
  it("delivers PostToConnection data as one text message, bytes untouched", async () => {
    // Prepare
    const { handler, events } = recordingWebSocketHandler();
    const gateway = await startGateway({ webSocketHandler: handler });
    const client = await connect(gateway.webSocketUrl);
    const payload = JSON.stringify({ type: "delta", text: "héllo ✓" });

    // Act
    await managementClient(gateway).send(
      new PostToConnectionCommand({ ConnectionId: connectionIdOf(events), Data: new TextEncoder().encode(payload) }),
    );

    // Assess
    const [received] = await waitFor(() => client.messages.length > 0 && client.messages);
    expect(received).toBe(payload);
  });

  it("raises GoneException for a closed connection and for an unknown one", async () => {
    // Prepare
    const { handler, events } = recordingWebSocketHandler();
    const gateway = await startGateway({ webSocketHandler: handler });
    const client = await connect(gateway.webSocketUrl);
    const connectionId = connectionIdOf(events);
    client.ws.close(1000);
    await waitFor(() => disconnectsOf(events).length > 0);
    const sdk = managementClient(gateway);

    // Act
    const afterClose = await sdk
      .send(new PostToConnectionCommand({ ConnectionId: connectionId, Data: Buffer.from("late") }))
      .catch((error: unknown) => error);
    const unknown = await sdk.send(new GetConnectionCommand({ ConnectionId: "AAAAAAAAAAAAAAA=" })).catch((error: unknown) => error);

    // Assess
    expect(afterClose).toBeInstanceOf(GoneException);
    expect(unknown).toMatchObject({ name: "GoneException", $metadata: { httpStatusCode: 410 } });
  });

  it("raises PayloadTooLargeException for data over messageBytes", async () => {
    // Prepare
    const { handler, events } = recordingWebSocketHandler();
    const gateway = await startGateway({ webSocketHandler: handler, limits: { messageBytes: 1024 } });
    await connect(gateway.webSocketUrl);

    // Act
    const sent = managementClient(gateway).send(
      new PostToConnectionCommand({ ConnectionId: connectionIdOf(events), Data: Buffer.alloc(1025, 120) }),
    );

    // Assess
    await expect(sent).rejects.toBeInstanceOf(PayloadTooLargeException);
    expect(gateway.connectionCount()).toBe(1);
  });

  it("answers GetConnection with connection times and identity", async () => {
    // Prepare
    const { handler, events } = recordingWebSocketHandler();
    const gateway = await startGateway({ webSocketHandler: handler });
    const client = await connect(gateway.webSocketUrl, { "User-Agent": "ws-test" });
    const connectedAt = events[0].requestContext.connectedAt;
    await new Promise((resolve) => setTimeout(resolve, 20));
    client.ws.send("activity");
    await waitFor(() => events.some((event) => event.requestContext.eventType === "MESSAGE"));

    // Act
    const info = await managementClient(gateway).send(new GetConnectionCommand({ ConnectionId: connectionIdOf(events) }));

    // Assess
    expect(info.ConnectedAt?.getTime()).toBe(connectedAt);
    expect(info.Identity).toEqual({ SourceIp: "127.0.0.1", UserAgent: "ws-test" });
    expect(info.LastActiveAt!.getTime()).toBeGreaterThan(connectedAt);
  });

  it("DeleteConnection closes the socket and fires $disconnect exactly once", async () => {
    // Prepare
    const { handler, events } = recordingWebSocketHandler();
    const gateway = await startGateway({ webSocketHandler: handler });
    const client = await connect(gateway.webSocketUrl);
    const sdk = managementClient(gateway);

    // Act
    const deleted = await sdk.send(new DeleteConnectionCommand({ ConnectionId: connectionIdOf(events) }));

    // Assess
    expect(deleted.$metadata.httpStatusCode).toBe(204);
    expect((await client.closed).code).toBe(1000);
    const [disconnect] = await waitFor(() => disconnectsOf(events).length > 0 && disconnectsOf(events));
    expect(disconnect.requestContext).toMatchObject({ disconnectStatusCode: 1000, connectionId: connectionIdOf(events) });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(disconnectsOf(events)).toHaveLength(1);
    expect(gateway.connectionCount()).toBe(0);
  });
});

// ---------------------------------------------------------------- frame size on the wire

/** A masked client frame (RFC 6455 5.2) with a zero payload of `length` bytes. */
function clientFrame(opcode: number, length: number, fin = true): Buffer {
  const lengthBytes =
    length < 126
      ? Buffer.from([0x80 | length])
      : length <= 0xffff
        ? Buffer.from([0x80 | 126, length >> 8, length & 0xff])
        : Buffer.concat([Buffer.from([0x80 | 127]), bigEndian64(length)]);
  return Buffer.concat([Buffer.from([(fin ? 0x80 : 0) | opcode]), lengthBytes, Buffer.from([1, 2, 3, 4]), Buffer.alloc(length)]);
}

function bigEndian64(value: number): Buffer {
  const bytes = Buffer.alloc(8);
  bytes.writeBigUInt64BE(BigInt(value));
  return bytes;
}

function firstOversized(guard: FrameSizeGuard, wire: Buffer, chunkBytes: number): number | undefined {
  for (let offset = 0; offset < wire.length; offset += chunkBytes) {
    const found = guard.feed(wire.subarray(offset, offset + chunkBytes));
    if (found !== undefined) return found;
  }
  return undefined;
}

describe("FrameSizeGuard", () => {
  it("finds the first data frame over the limit wherever chunk boundaries fall", () => {
    // Prepare
    const fitting = [clientFrame(0x1, 100, false), clientFrame(0x9, 5), clientFrame(0x0, 300, false), clientFrame(0x0, 65_000)];
    const wire = Buffer.concat([...fitting, clientFrame(0x2, 70_000)]);

    for (const chunkBytes of [1, 2, 3, 7, 13, 64, 1_000, wire.length]) {
      // Act
      const found = firstOversized(new FrameSizeGuard(65_536), wire, chunkBytes);
      const clean = firstOversized(new FrameSizeGuard(65_536), Buffer.concat(fitting), chunkBytes);

      // Assess
      expect(found).toBe(70_000);
      expect(clean).toBeUndefined();
    }
  });
});
