import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { listAttempts } from "../../shared/aws/attempts";
import { chat } from "../support/fake-openai-server";
import { STACK_START_TIMEOUT_MS } from "../support/timeouts";
import { decisionLabels, STALL_IDLE_TIMEOUT_SECONDS, startLoopStack, type LoopStack } from "../support/loop-stack";

/**
 * The system prompt through the template-deployed local stack: the
 * workspace folder is bundled with the attempt function's code, the prompt
 * is built there and sent to the fake OpenAI server. Also the
 * context-window guard and timeout compaction sized with the prompt sent.
 */
let loop: LoopStack;
let dir: string;
// ~27.5k tokens of AGENTS.md: alone over 65 % of the 40k-token window of openai/gpt-mid.
const HEAVY_AGENTS = `Follow the house rules.\n${"rule ".repeat(22_000)}`;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "prompt-workspace-"));
  writeFileSync(join(dir, "AGENTS.md"), HEAVY_AGENTS);
  writeFileSync(join(dir, "SOUL.md"), "Cheerful and brief.");
  writeFileSync(join(dir, "BOOTSTRAP.md"), "First contact: ask the user for their name.");
  loop = await startLoopStack(({ openai }) => ({
    model: "openai/gpt-4o",
    providers: { openai },
    agent: { idleTimeoutSeconds: STALL_IDLE_TIMEOUT_SECONDS },
    workspace: { dir, bootstrapMaxChars: 120_000, bootstrapTotalMaxChars: 150_000 },
    prompt: { userTimezone: "Asia/Tokyo" },
    context: { reserveTokens: 0, modelContextWindows: { "openai/gpt-tiny": 8192, "openai/gpt-mid": 40_000 } },
  }));
}, STACK_START_TIMEOUT_MS);

afterAll(async () => {
  await loop?.close();
  rmSync(dir, { recursive: true, force: true });
});

afterEach(() => {
  const left = loop.oai.pending;
  loop.oai.clear();
  expect(left).toBe(0);
});

type Body = { messages: { role: string; content: unknown }[] };
const systemOf = (index: number) => String((loop.oai.requests[index].body as Body).messages.find((m) => m.role === "system")?.content ?? "");

describe("the system prompt a deployed attempt sends", () => {
  it("has OpenClaw's sections, the user's time zone, the runtime line, and BOOTSTRAP.md only on the session's first run", async () => {
    const from = loop.oai.requests.length;
    loop.oai.enqueue(chat.text("Hi! What is your name?"), chat.text("Nice to meet you."));
    const first = await loop.run("hello", { sessionKey: "prompt-session" });
    const second = await loop.run("I am Ana", { sessionKey: "prompt-session" });
    expect([first.status, second.status]).toEqual(["ok", "ok"]);
    const [one, two] = [systemOf(from), systemOf(from + 1)];
    for (const heading of ["## Tooling", "## Safety", "## Workspace", "## Current Date & Time", "# Project Context", "## AGENTS.md", "## SOUL.md", "## Runtime"]) {
      expect(one).toContain(heading);
    }
    expect(one).toContain("Time zone: Asia/Tokyo");
    expect(one).toContain("Runtime: agent=main | model=openai/gpt-4o | channel=rest | thinking=off");
    expect(one).toContain("## BOOTSTRAP.md\n\nFirst contact: ask the user for their name.");
    expect(two).not.toContain("## BOOTSTRAP.md");
    expect(two).toContain("## SOUL.md\n\nCheerful and brief.");
  });

  it("refuses a model whose window is below 16000 tokens with a clear error, before calling it", async () => {
    const from = loop.oai.requests.length;
    const run = await loop.run("hello", { request: { model: "openai/gpt-tiny" } });
    expect(run.status).toBe("error");
    expect(run.record.error).toBe("Model context window too small (8192 tokens). Minimum is 16000.");
    expect(loop.oai.requests.length).toBe(from);
  });

  it("a timeout compacts when the prompt actually sent (its bootstrap files) fills the window, not just the history", async () => {
    loop.oai.enqueue(chat.stall(), chat.text("Answer."));
    const run = await loop.run("Go on.", { request: { model: "openai/gpt-mid" } });
    expect(decisionLabels(run.decisions)).toEqual(["compact:timeout", "finalize:ok:completed"]);
    const [stalled] = await listAttempts(loop.stack.deps.db, run.runId);
    expect(stalled.systemPromptChars).toBeGreaterThan(HEAVY_AGENTS.length);
  });
});
