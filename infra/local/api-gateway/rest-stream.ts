/**
 * The client side of a response-streaming integration, as API Gateway does
 * it: the function's stream starts with a JSON prelude (`statusCode`,
 * `headers`, `cookies`) ended by 8 NUL bytes (what
 * `awslambda.HttpResponseStream.from` writes); the status and headers go out
 * when the prelude is complete, every later byte as it arrives.
 */
import type { ServerResponse } from "node:http";

const DELIMITER = Buffer.alloc(8);

interface Prelude {
  statusCode?: number;
  headers?: Record<string, string>;
  cookies?: string[];
}

export class StreamedResponseWriter {
  private pending = Buffer.alloc(0);
  private started = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly gatewayHeaders: Record<string, string>,
  ) {}

  get headersSent(): boolean {
    return this.started;
  }

  onChunk(chunk: Buffer): void {
    if (this.started) {
      this.res.write(chunk);
      return;
    }
    this.pending = Buffer.concat([this.pending, chunk]);
    const at = this.pending.indexOf(DELIMITER);
    if (at < 0) return;
    const prelude = parsePrelude(this.pending.subarray(0, at));
    const rest = this.pending.subarray(at + DELIMITER.length);
    this.begin(prelude);
    if (rest.length > 0) this.res.write(rest);
  }

  /** The function returned: whatever is buffered is the body (a stream without prelude is a 200). */
  finish(): void {
    if (!this.started) {
      const body = this.pending;
      this.begin({ statusCode: 200, headers: { "content-type": "application/octet-stream" } });
      if (body.length > 0) this.res.write(body);
    }
    this.res.end();
  }

  private begin(prelude: Prelude): void {
    this.started = true;
    const headers: Record<string, string | string[]> = { ...(prelude.headers ?? {}), ...this.gatewayHeaders };
    if (prelude.cookies?.length) headers["set-cookie"] = prelude.cookies;
    this.res.writeHead(prelude.statusCode ?? 200, headers);
    this.res.flushHeaders();
  }
}

function parsePrelude(bytes: Buffer): Prelude {
  try {
    const parsed = JSON.parse(bytes.toString("utf8")) as Prelude;
    return typeof parsed === "object" && parsed !== null ? parsed : {};
  } catch {
    return {};
  }
}
