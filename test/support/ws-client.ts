import WebSocket from "ws";
import { RUN_END_TIMEOUT_MS } from "./timeouts";

export interface Frame {
  type: string;
  id?: string | null;
  ok?: boolean;
  payload?: any;
  error?: { code: string; message: string; details?: Record<string, unknown> };
  event?: string;
  seq?: number;
}

/** A tiny gateway-protocol client for tests: request/response by id, and a log of every frame. */
export class TestWsClient {
  readonly frames: Frame[] = [];
  private waiters: { match: (f: Frame) => boolean; resolve: (f: Frame) => void; reject: (e: Error) => void }[] = [];
  closeCode: number | undefined;
  private counter = 0;

  private constructor(readonly socket: WebSocket) {
    socket.on("message", (data) => {
      const frame = JSON.parse(data.toString()) as Frame;
      this.frames.push(frame);
      this.waiters = this.waiters.filter((w) => (w.match(frame) ? (w.resolve(frame), false) : true));
    });
    socket.on("close", (code) => {
      this.closeCode = code;
      for (const waiter of this.waiters) waiter.reject(new Error(`connection closed (${code})`));
      this.waiters = [];
    });
  }

  static async open(url: string, options: { protocols?: string[]; headers?: Record<string, string> } = {}): Promise<TestWsClient> {
    const socket = new WebSocket(url, options.protocols ?? [], options.headers ? { headers: options.headers } : {});
    // Listen before the handshake completes: the server's first frame can arrive in the same
    // TCP chunk as the 101 response, and ws emits it right after `open`.
    const client = new TestWsClient(socket);
    await new Promise<void>((resolve, reject) => {
      socket.once("open", () => resolve());
      socket.once("error", reject);
    });
    return client;
  }

  /** Sends a `req` and resolves with its `res`. */
  async request(method: string, params?: unknown, timeoutMs = RUN_END_TIMEOUT_MS): Promise<Frame> {
    const id = `t-${++this.counter}`;
    const response = this.waitFor((f) => f.type === "res" && f.id === id, timeoutMs);
    this.socket.send(JSON.stringify({ type: "req", id, method, params }));
    return response;
  }

  sendRaw(text: string): void {
    this.socket.send(text);
  }

  /** The bound only ends a broken test (a run on the loaded machine can take minutes): never a condition. */
  waitFor(match: (f: Frame) => boolean, timeoutMs = RUN_END_TIMEOUT_MS): Promise<Frame> {
    const seen = this.frames.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no matching frame within ${timeoutMs} ms`)), timeoutMs);
      this.waiters.push({
        match,
        resolve: (f) => (clearTimeout(timer), resolve(f)),
        reject: (e) => (clearTimeout(timer), reject(e)),
      });
    });
  }

  agentEvents(runId: string): Frame[] {
    return this.frames.filter((f) => f.type === "event" && f.event === "agent" && f.payload?.runId === runId);
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      if (this.socket.readyState === WebSocket.CLOSED) return resolve();
      this.socket.once("close", () => resolve());
      this.socket.close();
    });
  }
}
