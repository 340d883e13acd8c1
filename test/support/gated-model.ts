/**
 * A chat-completions model server for fault cases: every request is answered
 * (a fault may make a run call the model again, which the test then counts),
 * the message tagged `{<tag>}` by name; a test may hold the answers to a tag
 * until it releases them (a barrier, not a delay).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { lastUserText } from "./chat-request";
import type { AddressInfo } from "node:net";
import { chatStreamBody } from "./fake-openai-server";

export class GatedModel {
  private readonly counts = new Map<string, number>();
  private readonly gates = new Map<string, Promise<void>>();
  private readonly server = createServer((req, res) => void this.handle(req, res));

  /** The OpenAI `baseURL` (with `/v1`). */
  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Holds the answers to `{tag}` until the returned function is called. */
  hold(tag: string): () => void {
    let release!: () => void;
    this.gates.set(tag, new Promise<void>((resolve) => (release = resolve)));
    return () => release();
  }

  /** How many times the model answered the message tagged `{tag}`. */
  answers(tag: string): number {
    return this.counts.get(tag) ?? 0;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const text = await lastUserText(req);
    const tag = /\{([^}]+)\}/.exec(text)?.[1] ?? "?";
    await this.gates.get(tag);
    this.counts.set(tag, (this.counts.get(tag) ?? 0) + 1);
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.end(chatStreamBody({ text: `Answer to ${tag}` }));
  }
}
