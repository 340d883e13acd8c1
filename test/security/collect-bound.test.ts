import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLocalStack, type LocalStack } from "../../infra/local/stack";
import { loadAgentConfig } from "../../shared/config/config";
import { chat } from "../support/fake-openai-server";

/**
 * Defect 1 through the template-deployed stack: two 150 KB messages
 * collected behind a busy run used to be written into one run record past
 * DynamoDB's 400 KB item limit, and every later pump and sweep threw. Now
 * the batch is cut where the record would pass its budget; the rest runs
 * next. A model server that holds its first answer keeps the first run busy
 * (a barrier, not a sleep) while the two big messages queue behind it.
 */
class HeldModel {
  readonly bodies: string[] = [];
  private release!: () => void;
  private readonly released = new Promise<void>((resolve) => (this.release = resolve));
  private server!: Server;

  async start(): Promise<string> {
    this.server = createServer((req, res) => void this.answer(req, res));
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  letFirstAnswer(): void {
    this.release();
  }

  private async answer(req: IncomingMessage, res: import("node:http").ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    this.bodies.push(Buffer.concat(chunks).toString("utf8"));
    if (this.bodies.length === 1) await this.released;
    const step = chat.text(`answer ${this.bodies.length}`) as { body: string };
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.end(step.body);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

let stack: LocalStack;
const model = new HeldModel();

beforeAll(async () => {
  const baseURL = await model.start();
  const config = loadAgentConfig({ OPENAI_API_KEY: "test", OPENAI_BASE_URL: baseURL, MODEL: "openai/gpt-4o" });
  stack = await startLocalStack({ config });
});
afterAll(async () => {
  model.letFirstAnswer();
  await stack?.close();
  await model.close();
});

const headers = () => ({ authorization: `Bearer ${stack.authToken}`, "content-type": "application/json" });

async function post(body: Record<string, unknown>): Promise<{ status: number; body: { runId: string; status: string } }> {
  const response = await fetch(`${stack.restUrl}/v1/agent`, { method: "POST", headers: headers(), body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as { runId: string; status: string } };
}

async function runOf(runId: string): Promise<{ runStatus: string }> {
  const response = await fetch(`${stack.restUrl}/v1/runs/${runId}`, { headers: headers() });
  return (await response.json()) as { runStatus: string };
}

describe("collect mode keeps the run record bounded and loses nothing (defect 1)", () => {
  it("two 150 KB collected messages run one after the other instead of wedging the session", async () => {
    const sessionKey = "collect-big";
    const first = await post({ sessionKey, message: "first" });
    expect(first.status).toBe(202);
    await expect.poll(() => model.bodies.length, { timeout: 60_000 }).toBe(1);

    const big = (tag: string) => `${tag}:${"y".repeat(150 * 1024)}`;
    const second = await post({ sessionKey, message: big("SECOND"), queue: { mode: "collect", debounceMs: 0 } });
    const third = await post({ sessionKey, message: big("THIRD"), queue: { mode: "collect", debounceMs: 0 } });
    expect([second.status, third.status]).toEqual([202, 202]);
    model.letFirstAnswer();

    const ended = async () => (await Promise.all([first, second, third].map((r) => runOf(r.body.runId)))).map((r) => r.runStatus);
    await expect.poll(ended, { timeout: 120_000, interval: 500 }).toEqual(["ok", expect.stringMatching(/^(ok|collected)$/), expect.stringMatching(/^(ok|collected)$/)]);
    // Both big messages reached the model: nothing accepted was lost.
    const sent = model.bodies.slice(1).join("\n");
    expect(sent).toContain("SECOND:");
    expect(sent).toContain("THIRD:");
    // They did not share one oversized record: each was the new user turn of a run of its own.
    const newTurns = model.bodies.slice(1).map((body) => {
      const messages = (JSON.parse(body) as { messages: { role: string; content: string }[] }).messages;
      return messages.filter((m) => m.role === "user").at(-1)!.content.slice(0, 7);
    });
    expect(newTurns).toEqual(["SECOND:", "THIRD:y"]);
    expect(await ended()).toEqual(["ok", "ok", "ok"]);
  }, 240_000);
});
