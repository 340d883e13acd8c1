import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLocalStack, type LocalStack } from "../../infra/local/stack";
import { getRun } from "../../shared/aws/runs";
import { loadAgentConfig } from "../../shared/config/config";
import { chat, FakeOpenAIServer, heldChat } from "../support/fake-openai-server";
import { TestWsClient } from "../support/ws-client";

/**
 * The real OpenClaw CLI against the local stack. Opt-in (it needs the
 * `openclaw` npm package and Node 24, neither part of this repo):
 *
 *   OPENCLAW_BIN=/path/to/node_modules/.bin/openclaw OPENCLAW_NODE=/path/to/node24 npx vitest run test/e2e/openclaw-cli.test.ts
 *
 * OPENCLAW_NODE is optional when `node` on PATH is already 24.
 */
const BIN = process.env.OPENCLAW_BIN;
const NODE = process.env.OPENCLAW_NODE;

let stack: LocalStack;
let oai: FakeOpenAIServer;
let home: string;

interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function openclaw(args: string[], env: Record<string, string> = {}, onStart?: (child: ReturnType<typeof spawn>) => void): Promise<CliRun> {
  const [command, argv] = NODE ? [NODE, [BIN as string, ...args]] : [BIN as string, args];
  const child = spawn(command, argv, {
    env: { ...cleanEnv(), HOME: home, OPENCLAW_GATEWAY_URL: stack.webSocketUrl, OPENCLAW_GATEWAY_TOKEN: stack.authToken, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  onStart?.(child);
  return new Promise((resolve) => child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr })));
}

/** The CLI prints nothing when it sees it runs under vitest (VITEST=true), so its env leaves those out. */
function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith("VITEST") && key !== "NODE_ENV"));
}

describe.skipIf(!BIN)("the real OpenClaw CLI (`openclaw agent`, gateway mode)", () => {
  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), "openclaw-home-"));
    oai = await FakeOpenAIServer.start();
    stack = await startLocalStack({ config: loadAgentConfig({ OPENAI_API_KEY: "test", OPENAI_BASE_URL: oai.baseURL, MODEL: "openai/gpt-4o" }) });
  }, 60_000);
  afterAll(async () => {
    await stack?.close();
    await oai?.close();
  });

  it("completes a turn and prints the JSON answer (exit 0)", async () => {
    oai.enqueue(chat.text("pong"));
    const run = await openclaw(["agent", "--session-id", "cli-1", "--message", "Say pong", "--json"]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ status: "ok", result: { payloads: [{ text: "pong" }] } });
  }, 90_000);

  it("prints the reply text, with and without a session selector", async () => {
    oai.enqueue(chat.text("first reply"), chat.text("second reply"));
    const withId = await openclaw(["agent", "--session-id", "cli-2", "--message", "hello"]);
    expect(withId).toMatchObject({ code: 0, stdout: expect.stringContaining("first reply") });
    const bare = await openclaw(["agent", "--message", "hello again"]);
    expect(bare).toMatchObject({ code: 0, stdout: expect.stringContaining("second reply") });
  }, 90_000);

  it("exits 1 with the server's message on a wrong token", async () => {
    const run = await openclaw(["agent", "--session-id", "cli-3", "--message", "x"], { OPENCLAW_GATEWAY_TOKEN: "wrong" });
    expect(run.code).toBe(1);
    expect(run.stdout + run.stderr).toContain("token mismatch");
  }, 90_000);

  it("on SIGINT sends chat.abort and the run ends aborted", async () => {
    // Held after the first word until the test is done: only the CLI's abort can end the run.
    const answer = heldChat({ text: Array.from({ length: 400 }, () => "slow ") });
    oai.enqueue(answer.step);
    const watcher = await TestWsClient.open(stack.webSocketUrl);
    await watcher.request("connect", { auth: { token: stack.authToken } });
    await watcher.request("sessions.subscribe", { sessionKey: "agent:main:explicit:cli-4" });
    try {
      const run = await openclaw(["agent", "--session-id", "cli-4", "--message", "go slowly"], {}, (child) => {
        void watcher.waitFor((f) => f.event === "agent" && f.payload?.stream === "assistant").then(() => child.kill("SIGINT"));
      });
      expect(run.code === 130 || run.signal === "SIGINT").toBe(true);
      const started = watcher.frames.find((f) => f.event === "agent")!.payload.runId as string;
      await watcher.waitFor((f) => f.event === "agent" && f.payload?.runId === started && f.payload?.data?.phase === "error");
      expect((await getRun(stack.deps.db, started))?.status).toBe("aborted");
    } finally {
      answer.release();
      await watcher.close();
    }
  }, 90_000);
});
