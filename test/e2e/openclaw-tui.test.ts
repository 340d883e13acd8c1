import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLocalStack, type LocalStack } from "../../infra/local/stack";
import { getRun } from "../../shared/aws/runs";
import { loadAgentConfig } from "../../shared/config/config";
import { CHAT_PATH, chat, chatStreamBody, FakeOpenAIServer } from "../support/fake-openai-server";
import { TmuxSession } from "../support/tmux";
import { until } from "../support/until";
import { WsRecorder } from "../support/ws-recorder";
import { TUI_FIXTURE, type TuiFixture } from "../support/tui-fixture";

/**
 * The real OpenClaw TUI (`openclaw tui`) under tmux against the local stack,
 * through a recording WebSocket proxy. Opt-in, like the CLI test:
 *
 *   OPENCLAW_BIN=/path/to/node_modules/openclaw/openclaw.mjs OPENCLAW_NODE=/path/to/node24 npx vitest run test/e2e/openclaw-tui.test.ts
 *
 * OPENCLAW_RECORD=1 also writes the frames the TUI exchanged to
 * test/fixtures/openclaw/tui-session.json, which the default suite replays
 * (test/e2e/openclaw-tui-replay.test.ts).
 */
const BIN = process.env.OPENCLAW_BIN;
const NODE = process.env.OPENCLAW_NODE;
const SESSION = "tui-e2e";

let stack: LocalStack;
let oai: FakeOpenAIServer;
let recorder: WsRecorder;
let tui: TmuxSession;
let releaseSlow: () => void = () => undefined;

describe.skipIf(!BIN)("the real OpenClaw TUI (`openclaw tui`) under tmux", () => {
  beforeAll(async () => {
    oai = await FakeOpenAIServer.start();
    stack = await startLocalStack({ config: loadAgentConfig({ OPENAI_API_KEY: "test", OPENAI_BASE_URL: oai.baseURL, MODEL: "openai/gpt-4o" }) });
    recorder = await WsRecorder.start(stack.webSocketUrl);
    const home = mkdtempSync(join(tmpdir(), "openclaw-tui-home-"));
    const command = [...(NODE ? [NODE] : []), BIN as string, "tui", "--url", recorder.url, "--token", stack.authToken, "--session", SESSION];
    tui = TmuxSession.start(`oc-tui-${process.pid}`, command, { HOME: home, PATH: process.env.PATH ?? "", TERM: "xterm-256color", LANG: "C.UTF-8" });
  }, 120_000);
  afterAll(async () => {
    if (process.env.OPENCLAW_RECORD && recorder) saveFixture();
    releaseSlow();
    tui?.kill();
    await recorder?.close();
    await stack?.close();
    await oai?.close();
  });

  it("connects, sends a message and shows the streamed reply", async () => {
    // Connected, history loaded (its `session <key>` line), nothing running: the editor takes input now.
    await tui.waitForScreen((s) => s.includes(`session agent:main:${SESSION}`) && s.includes("connected | idle"), "the TUI to open its session");
    oai.enqueue(chat.stream({ text: ["The answer ", "is ", "forty-two."] }));
    tui.type("what is 6*7?");
    tui.press("Enter");
    await tui.waitForScreen((s) => s.includes("The answer is forty-two."), "the streamed reply on screen");
    const sent = recorder.frames.find((f) => f.dir === "c2s" && f.frame.method === "chat.send");
    expect(sent?.frame).toMatchObject({ params: { sessionKey: `agent:main:${SESSION}`, message: "what is 6*7?" } });
  }, 180_000);

  it("aborts a reply that is still streaming (Esc) and the run ends aborted", async () => {
    await tui.waitForScreen((s) => s.includes("connected | idle"), "the TUI to be idle again");
    const held = new Promise<void>((resolve) => (releaseSlow = resolve));
    oai.enqueue({ kind: "sse", path: CHAT_PATH, body: chatStreamBody({ text: ["Counting: ", "one ", "two ", "three ", "four"] }), hold: { afterFrames: 2, until: held } });
    tui.type("count slowly");
    tui.press("Enter");
    await tui.waitForScreen((s) => s.includes("Counting:"), "the partial reply on screen");
    tui.press("Escape");
    const abort = await until(async () => recorder.frames.find((f) => f.dir === "c2s" && f.frame.method === "chat.abort"), "the TUI's chat.abort");
    const answer = await until(async () => recorder.frames.find((f) => f.dir === "s2c" && f.frame.id === abort.frame.id), "chat.abort's answer");
    expect(answer.frame).toMatchObject({ ok: true, payload: { aborted: true } });
    const runId = (answer.frame.payload as { runIds: string[] }).runIds[0]!;
    await until(async () => ((await getRun(stack.deps.db, runId))?.status === "aborted" ? true : undefined), "the run to end aborted");
    releaseSlow();
    await until(async () => recorder.frames.find((f) => f.dir === "s2c" && f.frame.event === "chat" && (f.frame.payload as { runId?: string; state?: string }).state === "aborted" && (f.frame.payload as { runId?: string }).runId === runId), "the chat `aborted` event");
    await tui.waitForScreen((s) => /abort/i.test(s), "the TUI to show the abort");
  }, 180_000);
});

/** The client frames (and the answers, for reference) the TUI exchanged, as the replay test reads them. */
function saveFixture(): void {
  // The recording stack's token is not kept (the replay sends its own).
  const frames = recorder.frames.map((f) => (f.frame.method === "connect" ? { ...f, frame: { ...f.frame, params: { ...(f.frame.params as object), auth: { token: "<token>" } } } } : f));
  const fixture: TuiFixture = { recordedWith: "openclaw 2026.9.6 tui", session: SESSION, frames };
  mkdirSync(dirname(TUI_FIXTURE), { recursive: true });
  writeFileSync(TUI_FIXTURE, `${JSON.stringify(fixture, null, 1)}\n`);
}
