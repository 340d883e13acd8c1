import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import WebSocket, { WebSocketServer } from "ws";

/** One frame that crossed the recorder: who sent it and the parsed JSON. */
export interface RecordedFrame {
  /** c2s: client -> server; s2c: server -> client. */
  dir: "c2s" | "s2c";
  /** Which client connection (1, 2, ...), in the order they connected. */
  conn: number;
  frame: Record<string, unknown>;
}

/**
 * A WebSocket proxy for tests: a client (OpenClaw's TUI) connects to
 * `url`, every connection is relayed to `target`, and every text frame in
 * both directions is recorded in order. Messages from the server that
 * arrive before the client socket is open are queued, so nothing is lost.
 */
export class WsRecorder {
  readonly frames: RecordedFrame[] = [];
  private connections = 0;
  private readonly sockets = new Set<WebSocket>();

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(target: string): Promise<WsRecorder> {
    const server = createServer();
    const wss = new WebSocketServer({ server });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const recorder = new WsRecorder(server, `ws://127.0.0.1:${(server.address() as AddressInfo).port}`);
    wss.on("connection", (client, request) => recorder.relay(client, target, request.headers));
    return recorder;
  }

  private relay(client: WebSocket, target: string, headers: Record<string, string | string[] | undefined>): void {
    const conn = ++this.connections;
    const authorization = typeof headers.authorization === "string" ? { authorization: headers.authorization } : undefined;
    const upstream = new WebSocket(target, authorization ? { headers: authorization } : {});
    this.sockets.add(client).add(upstream);
    const pending: string[] = [];
    upstream.on("message", (data) => {
      const text = data.toString();
      this.record("s2c", conn, text);
      if (client.readyState === WebSocket.OPEN) client.send(text);
    });
    upstream.on("open", () => {
      for (const text of pending.splice(0)) upstream.send(text);
    });
    client.on("message", (data) => {
      const text = data.toString();
      this.record("c2s", conn, text);
      if (upstream.readyState === WebSocket.OPEN) upstream.send(text);
      else pending.push(text);
    });
    const closeBoth = () => {
      if (client.readyState === WebSocket.OPEN) client.close();
      if (upstream.readyState === WebSocket.OPEN || upstream.readyState === WebSocket.CONNECTING) upstream.terminate();
    };
    client.on("close", closeBoth);
    upstream.on("close", closeBoth);
    upstream.on("error", closeBoth);
    client.on("error", closeBoth);
  }

  private record(dir: RecordedFrame["dir"], conn: number, text: string): void {
    try {
      this.frames.push({ dir, conn, frame: JSON.parse(text) as Record<string, unknown> });
    } catch {
      this.frames.push({ dir, conn, frame: { unparsed: text } });
    }
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.terminate();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
