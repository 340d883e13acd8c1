import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { listen } from "../../infra/local/listen";

/** One request a fake platform received, exactly as it came. */
export interface RecordedCall {
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  rawBody: string;
  body: Record<string, unknown>;
  at: number;
}

export interface ScriptedAnswer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  /** A platform that hangs: the answer waits for this barrier (and goes nowhere if the caller gave up meanwhile). */
  hold?: Promise<unknown>;
}

/**
 * A loopback HTTP server that records every call and answers through a
 * handler; a queue of scripted answers (5xx, 429 ...) is served first. Tests
 * wait for a condition on the recorded calls (`waitFor`), never for time.
 */
export class RecordingServer {
  readonly calls: RecordedCall[] = [];
  private readonly scripted: ScriptedAnswer[] = [];
  private readonly rules: { matches: (call: RecordedCall) => boolean; answers: ScriptedAnswer[] }[] = [];
  private waiters: (() => void)[] = [];
  private server?: Server;
  origin = "";

  constructor(private readonly answer: (call: RecordedCall) => ScriptedAnswer) {}

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    const port = await listen(this.server, "127.0.0.1", 0);
    this.origin = `http://127.0.0.1:${port}`;
    return this;
  }

  /** The next calls get these answers, in order, before the handler answers again. */
  script(...answers: ScriptedAnswer[]): void {
    this.scripted.push(...answers);
  }

  /** The next calls that match get these answers, in order (other calls are answered as usual). */
  scriptWhen(matches: (call: RecordedCall) => boolean, ...answers: ScriptedAnswer[]): void {
    this.rules.push({ matches, answers });
  }

  callsTo(pathSuffix: string): RecordedCall[] {
    return this.calls.filter((call) => call.path.endsWith(pathSuffix));
  }

  async waitFor(predicate: () => boolean, timeoutMs = 60_000, what = "condition"): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; calls: ${this.calls.map((c) => c.path).join(", ")}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 200);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const rawBody = Buffer.concat(chunks).toString("utf8");
    let body: Record<string, unknown> = {};
    try {
      body = rawBody ? (JSON.parse(rawBody) as Record<string, unknown>) : {};
    } catch {
      body = {};
    }
    const call: RecordedCall = { method: req.method ?? "", path: req.url ?? "", headers: req.headers, rawBody, body, at: Date.now() };
    this.calls.push(call);
    const rule = this.rules.find((candidate) => candidate.answers.length > 0 && candidate.matches(call));
    const answer = rule?.answers.shift() ?? this.scripted.shift() ?? this.answer(call);
    if (answer.hold) await answer.hold;
    if (res.destroyed) return;
    res.writeHead(answer.status, { "content-type": "application/json", ...answer.headers });
    res.end(JSON.stringify(answer.body));
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }
}
