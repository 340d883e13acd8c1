/**
 * An OpenAI-compatible chat server for crash tests, answering by what each
 * request says rather than by arrival order (runs of many sessions race):
 * - `hold` (before a kill): starts streaming ("Working") and never ends, so
 *   the run is mid-stream when its process dies;
 * - `answer`: streams `Answer to: <the last user message>`.
 * Every request is recorded with the user message it answers.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { chatStreamBody } from "./fake-openai-server";

export interface ModelRequest {
  userText: string;
  mode: "hold" | "answer";
}

export class CrashModelServer {
  mode: "hold" | "answer" = "hold";
  readonly requests: ModelRequest[] = [];
  private readonly held = new Set<ServerResponse>();
  private readonly server = createServer((req, res) => void this.handle(req, res));

  static async start(): Promise<CrashModelServer> {
    const server = new CrashModelServer();
    await new Promise<void>((resolve) => server.server.listen(0, "127.0.0.1", resolve));
    return server;
  }

  get baseURL(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  /** Model requests made for the run whose user message is `text`. */
  requestsFor(text: string): ModelRequest[] {
    return this.requests.filter((request) => request.userText.includes(text));
  }

  async close(): Promise<void> {
    for (const res of this.held) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}") as { messages?: { role: string; content: unknown }[] };
    const userText = lastUserText(body.messages ?? []);
    const mode = this.mode;
    this.requests.push({ userText, mode });
    res.on("error", () => undefined);
    res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" });
    if (mode === "hold") {
      const partial = chatStreamBody({ text: "Working ", finishReason: null });
      res.write(partial);
      this.held.add(res);
      res.once("close", () => this.held.delete(res));
      return;
    }
    res.end(chatStreamBody({ text: `Answer to: ${userText}` }));
  }
}

function lastUserText(messages: { role: string; content: unknown }[]): string {
  const last = [...messages].reverse().find((message) => message.role === "user");
  if (!last) return "";
  if (typeof last.content === "string") return last.content;
  if (Array.isArray(last.content)) return last.content.map((part: { text?: string }) => part.text ?? "").join("");
  return "";
}
