/**
 * A loopback HTTP server that answers each request with the next scripted
 * step and records what it received. The provider-specific fakes
 * (fake-openai-server, fake-anthropic-server) add routes and wire-format
 * builders on top; this file knows nothing about either format.
 */
import { readFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export type ScriptStep =
  /** 200 text/event-stream with `body` (complete SSE text), written frame by frame. */
  | {
      kind: "sse";
      body: string;
      path?: string;
      headers?: Record<string, string>;
      frameDelayMs?: number;
      /** Wait for it before the first frame (a test decides when the answer starts). */
      gate?: Promise<unknown>;
      /** After `afterFrames` frames, wait for `until` before the rest (a test watches the partial stream). */
      hold?: { afterFrames: number; until: Promise<unknown> };
      /**
       * The whole body in one write, as a model that answers faster than the reader: the client
       * finds the frames already buffered (a test of coalescing, not of a frame-by-frame pace).
       */
      burst?: boolean;
    }
  /** A non-2xx JSON (or text) response, as the provider sends errors. */
  | { kind: "http-error"; status: number; body: unknown; path?: string; headers?: Record<string, string> }
  /** Headers (and optionally some SSE) then silence until the client gives up. */
  | { kind: "stall"; body?: string; path?: string }
  /** Some SSE, then the TCP connection is destroyed mid-body. */
  | { kind: "drop"; body: string; path?: string };

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** Parsed JSON body (or the raw text when it is not JSON). */
  body: unknown;
}

const FIXTURES = new URL("../fixtures/", import.meta.url);

/** Reads a file under test/fixtures, e.g. `openai/chat-text.sse`. */
export function readFixture(relativePath: string): string {
  return readFileSync(new URL(relativePath, FIXTURES), "utf8");
}

/** A recorded SSE transcript replayed verbatim. */
export function sseFixture(relativePath: string, path?: string): ScriptStep {
  return { kind: "sse", body: readFixture(relativePath), path };
}

/** A recorded error response: `{ "status": 429, "headers": {...}, "body": {...} }`. */
export function httpErrorFixture(relativePath: string, path?: string): ScriptStep {
  const recorded = JSON.parse(readFixture(relativePath)) as { status: number; headers?: Record<string, string>; body: unknown };
  return { kind: "http-error", status: recorded.status, headers: recorded.headers, body: recorded.body, path };
}

/** A string is streamed word by word, as models do; an array is used as the exact chunks. */
export function wordChunks(text: string | string[] | undefined): string[] {
  if (text === undefined) return [];
  if (Array.isArray(text)) return text;
  return text.match(/\S+\s*|\s+/g) ?? [];
}

/** Splits a string into about `parts` pieces (tool-call argument deltas). */
export function splitInto(text: string, parts: number): string[] {
  const size = Math.max(1, Math.ceil(text.length / Math.max(1, parts)));
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/** Splits SSE text into frames (each ends with a blank line), keeping bytes intact. */
export function sseFrames(body: string): string[] {
  return body.split(/(?<=\n\n)/).filter((frame) => frame.length > 0);
}

/** A promise the test resolves when it decides (`gate` / `hold` of a scripted step). */
export interface Barrier {
  readonly promise: Promise<void>;
  release(): void;
}

export function barrier(): Barrier {
  let release!: () => void;
  const promise = new Promise<void>((resolve) => (release = resolve));
  return { promise, release };
}

export class ScriptedSseServer {
  readonly requests: RecordedRequest[] = [];
  private readonly queue: ScriptStep[] = [];
  private readonly server: Server;

  protected constructor(private readonly routes: readonly string[]) {
    this.server = createServer((req, res) => void this.handle(req, res));
  }

  protected async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
  }

  /** `http://127.0.0.1:<port>` */
  get origin(): string {
    const { port } = this.server.address() as AddressInfo;
    return `http://127.0.0.1:${port}`;
  }

  /** Queues responses, consumed one per request in order. */
  enqueue(...steps: ScriptStep[]): this {
    this.queue.push(...steps);
    return this;
  }

  /** Drops every step not yet consumed (isolates tests that share a server). */
  clear(): void {
    this.queue.length = 0;
  }

  /** Steps not yet consumed; a finished test usually expects 0. */
  get pending(): number {
    return this.queue.length;
  }

  get lastRequest(): RecordedRequest | undefined {
    return this.requests[this.requests.length - 1];
  }

  async close(): Promise<void> {
    this.server.closeAllConnections(); // stalled streams would otherwise keep close() waiting
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? "/", this.origin).pathname;
    const text = await readBody(req);
    this.requests.push({ method: req.method ?? "GET", path, headers: req.headers, body: parseJson(text) });
    if (!this.routes.includes(path)) return sendJson(res, 404, fakeError(`fake server: no route ${path}`));
    const step = this.queue.shift();
    if (!step) return sendJson(res, 500, fakeError(`fake server: no scripted step left for ${path}`));
    if (step.path && step.path !== path) {
      return sendJson(res, 500, fakeError(`fake server: step scripted for ${step.path}, request was ${path}`));
    }
    await play(step, res);
  }
}

function fakeError(message: string): unknown {
  return { error: { message, type: "fake_server_error" } };
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(text);
}

function startSse(res: ServerResponse, headers: Record<string, string> = {}): void {
  res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", connection: "keep-alive", ...headers });
  res.flushHeaders();
}

function write(res: ServerResponse, text: string): Promise<void> {
  return new Promise((resolve) => {
    if (res.destroyed || res.writableEnded) return resolve();
    res.write(text, () => resolve());
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Frame by frame: each its own write, with the step's pace and hold. */
async function writeFrames(res: ServerResponse, step: Extract<ScriptStep, { kind: "sse" }>): Promise<void> {
  for (const [index, frame] of sseFrames(step.body).entries()) {
    if (step.hold && index === step.hold.afterFrames) await step.hold.until;
    await write(res, frame);
    if (step.frameDelayMs) await sleep(step.frameDelayMs);
  }
}

async function play(step: ScriptStep, res: ServerResponse): Promise<void> {
  res.on("error", () => undefined); // the client may hang up first (abort, idle timeout)
  switch (step.kind) {
    case "http-error":
      return sendJson(res, step.status, step.body, step.headers);
    case "sse":
      // A barrier: the test decides when this model call answers (nothing depends on timing).
      if (step.gate) await step.gate;
      startSse(res, step.headers);
      await (step.burst ? write(res, step.body) : writeFrames(res, step));
      res.end();
      return;
    case "stall":
      startSse(res);
      if (step.body) await write(res, step.body);
      return; // never ends; close() or the client's abort tears it down
    case "drop":
      startSse(res);
      await write(res, step.body);
      res.socket?.destroy();
      return;
  }
}
