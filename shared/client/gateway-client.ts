import { randomUUID } from "node:crypto";
import WebSocket from "ws";
import { ChunkAssembler } from "../protocol/chunks";
import { CAP_FRAME_CHUNKS } from "../protocol/limits";
import { CAP_SURFACE_AGENT } from "../protocol/surface";
import { GatewayRequestError } from "./errors";

export { GatewayRequestError } from "./errors";

/**
 * A small client of this backend's WebSocket protocol (docs/protocol.md):
 * one connection, `connect` with the token, requests matched to responses by
 * id, `chunk` events reassembled before anything else sees them. No
 * reconnection here: run-follower.ts builds resumption on top.
 */
export interface Frame {
  type: string;
  id?: string | null;
  ok?: boolean;
  payload?: any;
  error?: { code: string; message: string; details?: Record<string, unknown> };
  event?: string;
  seq?: number;
}

export interface GatewayClientOptions {
  url: string;
  token: string;
  /** Advertised in `connect`; this client reassembles chunks, so `frame-chunks` by default. */
  caps?: string[];
  /** Every event frame (after chunk reassembly), including `connect.challenge`. */
  onEvent?: (frame: Frame) => void;
  onClose?: (code: number) => void;
  connectTimeoutMs?: number;
}

interface Pending {
  resolve: (frame: Frame) => void;
  reject: (error: Error) => void;
  /** Keep waiting past `status: "accepted"` (OpenClaw's expectFinal). */
  expectFinal: boolean;
  timer: NodeJS.Timeout;
}

export class GatewayClient {
  private readonly pending = new Map<string, Pending>();
  private readonly chunks = new ChunkAssembler();
  private counter = 0;
  hello: any;

  private constructor(private readonly socket: WebSocket, private readonly options: GatewayClientOptions) {
    socket.on("message", (data) => this.onMessage(data.toString()));
    socket.on("close", (code) => {
      for (const waiter of this.pending.values()) {
        clearTimeout(waiter.timer);
        waiter.reject(new Error(`connection closed (${code})`));
      }
      this.pending.clear();
      options.onClose?.(code);
    });
  }

  /** Opens the socket and authenticates; rejects on a refused token. */
  static async open(options: GatewayClientOptions): Promise<GatewayClient> {
    const socket = new WebSocket(options.url);
    // Listening before `open`: the server's first frame may arrive with the handshake itself.
    const client = new GatewayClient(socket, options);
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no connection to ${options.url}`)), options.connectTimeoutMs ?? 15_000);
      socket.once("open", () => (clearTimeout(timer), resolve()));
      socket.once("error", (error) => (clearTimeout(timer), reject(error)));
    });
    socket.on("error", () => undefined);
    // This client reads `agent` events only: one frame per streamed update instead of two.
    const caps = options.caps ?? [CAP_FRAME_CHUNKS, CAP_SURFACE_AGENT];
    const hello = await client.request("connect", { minProtocol: 1, maxProtocol: 1, client: { id: "agent-runner-cli", mode: "cli" }, caps, auth: { token: options.token } });
    if (!hello.ok) {
      socket.close();
      throw new GatewayRequestError(hello);
    }
    client.hello = hello.payload;
    return client;
  }

  get open(): boolean {
    return this.socket.readyState === WebSocket.OPEN;
  }

  /** Sends a `req`; resolves with its `res` (with `expectFinal`, the first one that is not an `accepted` ack). */
  request(method: string, params?: unknown, options: { timeoutMs?: number; expectFinal?: boolean; id?: string } = {}): Promise<Frame> {
    const id = options.id ?? `${++this.counter}:${randomUUID()}`;
    return new Promise((resolve, reject) => {
      if (!this.open) return reject(new Error("connection is not open"));
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`${method}: no answer within ${options.timeoutMs ?? 60_000} ms`));
      }, options.timeoutMs ?? 60_000);
      this.pending.set(id, { resolve, reject, expectFinal: options.expectFinal ?? false, timer });
      this.socket.send(JSON.stringify({ type: "req", id, method, params }));
    });
  }

  /** Drops the TCP connection without a close handshake (tests: a dead network). */
  terminate(): void {
    this.socket.terminate();
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      if (this.socket.readyState === WebSocket.CLOSED) return resolve();
      this.socket.once("close", () => resolve());
      this.socket.close();
    });
  }

  private onMessage(text: string): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return;
    }
    const frame = this.chunks.accept(parsed) as Frame | undefined;
    if (!frame) return;
    if (frame.type === "res" && typeof frame.id === "string") return this.onResponse(frame);
    if (frame.type === "event") this.options.onEvent?.(frame);
  }

  private onResponse(frame: Frame): void {
    const waiter = this.pending.get(frame.id as string);
    if (!waiter) return;
    if (waiter.expectFinal && frame.ok && frame.payload?.status === "accepted") return;
    clearTimeout(waiter.timer);
    this.pending.delete(frame.id as string);
    waiter.resolve(frame);
  }
}
