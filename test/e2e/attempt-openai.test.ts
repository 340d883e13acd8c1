import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLocalStack, type LocalStack } from "../../infra/local/stack";
import { listAttempts } from "../../shared/aws/attempts";
import { keys } from "../../shared/aws/keys";
import { getRun } from "../../shared/aws/runs";
import { readSpendItem } from "../../shared/aws/usage";
import { readTranscript } from "../../shared/aws/transcript";
import { loadAgentConfig } from "../../shared/config/config";
import { AttemptResultSchema } from "../../shared/core/attempt-result";
import { chat, FakeOpenAIServer } from "../support/fake-openai-server";

/**
 * The whole local stack (REST -> SQS -> Step Functions -> attempt Lambda ->
 * DynamoDB -> events) with OPENAI_BASE_URL pointing at a fake OpenAI server
 * that speaks the real Chat Completions wire format: the scripted model calls
 * two tools in parallel, then one more, then answers.
 */
let stack: LocalStack;
let oai: FakeOpenAIServer;
let workspaceDir: string;
const auth = () => ({ authorization: `Bearer ${stack.authToken}`, "content-type": "application/json" });

beforeAll(async () => {
  oai = await FakeOpenAIServer.start();
  workspaceDir = mkdtempSync(join(tmpdir(), "attempt-e2e-"));
  writeFileSync(join(workspaceDir, "AGENTS.md"), "Always show your arithmetic.");
  const configFile = join(workspaceDir, "config.json");
  writeFileSync(configFile, JSON.stringify({ workspace: { dir: workspaceDir }, pricing: { "openai/gpt-4.1-mini": { input: 0.4, output: 1.6 } }, budgets: { run: { maxTokens: 250 } } }));
  const config = loadAgentConfig({ OPENAI_BASE_URL: oai.baseURL, OPENAI_API_KEY: "sk-test" }, configFile);
  stack = await startLocalStack({ config });
});

afterAll(async () => {
  await stack?.close();
  await oai?.close();
  rmSync(workspaceDir, { recursive: true, force: true });
});

async function post(path: string, body: unknown) {
  const response = await fetch(`${stack.restUrl}${path}`, { method: "POST", headers: auth(), body: JSON.stringify(body) });
  return (await response.json()) as any;
}

describe("attempt end to end with the OpenAI wire format", () => {
  it("runs a tool loop over several model calls: transcript, events, result, usage", async () => {
    oai.enqueue(
      chat.toolCalls([
        { id: "call_calc", name: "calculator", args: { expression: "6 * 7" } },
        { id: "call_time", name: "current_time", args: { timezone: "UTC" } },
      ]),
      chat.toolCall("calculator", { expression: "42 + 1" }, "call_calc2"),
      chat.text("6 * 7 = 42, and 42 + 1 = 43.", { prompt: 120, completion: 12 }),
    );
    const accepted = await post("/v1/agent", { sessionKey: "e2e-openai", message: "Compute 6*7 then add one.", extraSystemPrompt: "Answer in one line." });
    expect(accepted.status).toBe("accepted");
    const waited = await post(`/v1/runs/${accepted.runId}/wait`, { timeoutMs: 20_000 });
    expect(waited.status).toBe("ok");

    // What the model was sent: system prompt with bootstrap file and per-run instructions; tool results fed back.
    expect(oai.requests).toHaveLength(3);
    const first = oai.requests[0].body as any;
    expect(first.model).toBe("gpt-4.1-mini");
    expect(first.messages[0].role).toBe("system");
    expect(first.messages[0].content).toContain("Always show your arithmetic.");
    expect(first.messages[0].content).toContain("Answer in one line.");
    expect(first.tools.map((t: any) => t.function.name)).toEqual(["calculator", "current_time", "http_fetch"]);
    const second = oai.requests[1].body as any;
    expect(second.messages.filter((m: any) => m.role === "tool").map((m: any) => [m.tool_call_id, m.content.slice(0, 2)])).toEqual([
      ["call_calc", "42"],
      ["call_time", '{"'],
    ]);

    // The transcript holds whole turns only, in order.
    const run = await getRun(stack.deps.db, accepted.runId);
    const transcript = (await readTranscript(stack.deps.db, run!.sessionId)).map((e) => e.message);
    expect(transcript.map((m) => m.role)).toEqual(["user", "assistant", "tool_result", "tool_result", "assistant", "tool_result", "assistant"]);
    expect(transcript[5]).toMatchObject({ role: "tool_result", toolCallId: "call_calc2", content: "43", isError: false });

    // Events: lifecycle start, tool start/result pairs, assistant text, lifecycle end with the reply.
    const events = ((await (await fetch(`${stack.restUrl}/v1/runs/${accepted.runId}/events`, { headers: auth() })).json()) as any).events;
    const tools = events.filter((e: any) => e.stream === "tool").map((e: any) => `${e.data.phase}:${e.data.name}`);
    expect(tools).toEqual(["start:calculator", "result:calculator", "start:current_time", "result:current_time", "start:calculator", "result:calculator"]);
    expect(events[0]).toMatchObject({ stream: "lifecycle", data: { phase: "start" } });
    const end = events[events.length - 1];
    expect(end).toMatchObject({ stream: "lifecycle", data: { phase: "end" } });
    expect(end.data.payloads).toEqual([{ text: "6 * 7 = 42, and 42 + 1 = 43." }]);

    // The structured attempt result, persisted and valid.
    const [attempt] = await listAttempts(stack.deps.db, accepted.runId);
    const { runId: _r, iteration: _i, model, offline: _o, startedAt: _s, endedAt: _e, ...result } = attempt;
    expect(model).toBe("openai/gpt-4.1-mini");
    expect(AttemptResultSchema.safeParse(result).success).toBe(true);
    expect(attempt).toMatchObject({ outcome: { kind: "completed" }, modelTurns: 3, toolCalls: 3, hadSideEffects: false, textBlocks: ["6 * 7 = 42, and 42 + 1 = 43."] });
    // Usage: two default chunks of 21/9 plus the last call's 120/12; cost from the configured price.
    expect(attempt.usage).toMatchObject({ input: 162, output: 30 });
    const spend = await readSpendItem(stack.deps.db, keys.runUsage(accepted.runId));
    expect(spend).toMatchObject({ calls: 3, tokens: 192, wastedTokens: 0 });
    expect(spend!.costUsd).toBeCloseTo((162 * 0.4 + 30 * 1.6) / 1_000_000, 12);
  });

  it("stops the run when its token budget is used up, before the next model call", async () => {
    // One call reports 310 tokens; the run's budget is 250 (configured above).
    oai.enqueue(chat.stream({ toolCalls: [{ id: "call_b1", name: "calculator", args: { expression: "1+1" } }], usage: { prompt: 300, completion: 10 } }), chat.text("unreachable"));
    const accepted = await post("/v1/agent", { sessionKey: "e2e-budget", message: "What is 1+1?" });
    const waited = await post(`/v1/runs/${accepted.runId}/wait`, { timeoutMs: 20_000 });
    expect(waited.status).toBe("error");
    const run = await getRun(stack.deps.db, accepted.runId);
    expect(run!.error).toMatch(/token budget is used up \(310 tokens of 250 tokens\)/);
    expect(oai.requests.filter((r) => JSON.stringify(r.body).includes("What is 1+1?"))).toHaveLength(1);
    const [attempt] = await listAttempts(stack.deps.db, accepted.runId);
    expect(attempt.outcome).toEqual({ kind: "budget_exceeded", scope: "run", limit: "tokens", spent: 310, max: 250 });
    // The tool turn was committed before the loop stopped: no orphan tool call.
    const transcript = (await readTranscript(stack.deps.db, run!.sessionId)).map((e) => e.message.role);
    expect(transcript).toEqual(["user", "assistant", "tool_result"]);
  });
});
