/**
 * A zero-latency model server for the benchmark, speaking OpenAI Chat
 * Completions byte for byte (the frames come from the test fake's builders,
 * test/support/fake-openai-server.ts). Unlike the test fake, which answers
 * from one global script queue, it answers from the conversation itself, so
 * 100 sessions can run at once without stealing each other's steps:
 *
 *   the last user message carries `[bench <shape> <runTag> key=value ...]`,
 *   the number of tool results after it says which round this is.
 *
 * It also times itself per run tag (request arrival to response end), which
 * is the "model-server time" the overhead figure subtracts.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { performance } from "node:perf_hooks";
import { chatStreamBody, openAIErrorBody } from "../test/support/fake-openai-server";
import { sseFrames } from "../test/support/scripted-sse-server";
import { parseDirective, planReply, type Directive, type PlannedReply } from "./shapes";

export interface RunModelStats {
  requests: number;
  /** Sum over this run's requests of server time (arrival to last byte written). */
  serverMs: number;
  statuses: number[];
}

interface ChatBody {
  messages?: { role?: string; content?: unknown }[];
}

export class BenchModelServer {
  private readonly stats = new Map<string, RunModelStats>();
  private readonly server: Server;

  private constructor() {
    this.server = createServer((req, res) => void this.handle(req, res));
  }

  static async start(): Promise<BenchModelServer> {
    const server = new BenchModelServer();
    await new Promise<void>((resolve) => server.server.listen(0, "127.0.0.1", resolve));
    return server;
  }

  /** What to give the OpenAI SDK / `providers.openai.baseURL`. */
  get baseURL(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  statsOf(runTag: string): RunModelStats {
    return this.stats.get(runTag) ?? { requests: 0, serverMs: 0, statuses: [] };
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const arrived = performance.now();
    const body = await readJson(req);
    const directive = lastUserDirective(body);
    if (req.url !== "/v1/chat/completions" || !directive) {
      res.writeHead(400, { "content-type": "application/json" });
      res.end(JSON.stringify(openAIErrorBody("bench model server: no [bench ...] directive", "invalid_request_error")));
      return;
    }
    const stats = this.stats.get(directive.runTag) ?? { requests: 0, serverMs: 0, statuses: [] };
    this.stats.set(directive.runTag, stats);
    const reply = planReply(directive, toolRoundsAfterLastUser(body), stats.requests);
    stats.requests += 1;
    res.once("finish", () => {
      stats.serverMs += performance.now() - arrived;
      stats.statuses.push(res.statusCode);
    });
    await send(res, reply);
  }
}

async function send(res: ServerResponse, reply: PlannedReply): Promise<void> {
  res.on("error", () => undefined);
  if (reply.kind === "error") {
    res.writeHead(reply.status, { "content-type": "application/json", ...reply.headers });
    res.end(JSON.stringify(reply.body));
    return;
  }
  res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", connection: "keep-alive" });
  const frames = sseFrames(chatStreamBody(reply.script));
  for (const frame of frames) {
    await new Promise<void>((resolve) => res.write(frame, () => resolve()));
    if (reply.frameDelayMs) await new Promise((resolve) => setTimeout(resolve, reply.frameDelayMs));
  }
  res.end();
}

async function readJson(req: IncomingMessage): Promise<ChatBody> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8")) as ChatBody;
  } catch {
    return {};
  }
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((part) => (part as { text?: string }).text ?? "").join("");
  return "";
}

function lastUserIndex(body: ChatBody): number {
  const messages = body.messages ?? [];
  for (let i = messages.length - 1; i >= 0; i -= 1) if (messages[i].role === "user") return i;
  return -1;
}

function lastUserDirective(body: ChatBody): Directive | undefined {
  const index = lastUserIndex(body);
  return index < 0 ? undefined : parseDirective(textOf(body.messages![index].content));
}

/** Tool results after the last user message = completed tool round trips of this run. */
export function toolRoundsAfterLastUser(body: ChatBody): number {
  const index = lastUserIndex(body);
  return (body.messages ?? []).slice(index + 1).filter((m) => m.role === "tool").length;
}
