/**
 * Outer-loop scenarios on the real state machine (local stack) with one
 * model and one key, against the fake OpenAI / Anthropic servers: every
 * same-model branch, every terminal error, and the three run shapes whose
 * cost the benchmark measures.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { appendTurn, claimWriter, readEntries, releaseWriter } from "../../shared/aws/transcript";
import { listAttempts } from "../../shared/aws/attempts";
import { keys } from "../../shared/aws/keys";
import { readSpendItem } from "../../shared/aws/usage";
import { getSession, resolveSession } from "../../shared/aws/sessions";
import type { Message } from "../../shared/core/messages";
import { USER_ERRORS } from "../../shared/core/loop-texts";
import { isSummaryMessage, SUMMARY_PREFIX } from "../../shared/core/session-view";
import { CONTINUATION_INSTRUCTIONS } from "../../shared/agent/system-prompt";
import { NEW_SESSION_PROMPT } from "../../shared/run/session-boundary";
import { CHAT_PATH, chat, openAIErrorBody } from "../support/fake-openai-server";
import { messages as anthropicMessages } from "../support/fake-anthropic-server";
import { httpErrorFixture } from "../support/scripted-sse-server";
import { decisionLabels, STALL_IDLE_TIMEOUT_SECONDS, startLoopStack, type FakeProviders, type LoopStack, type RunTrace } from "../support/loop-stack";
import { HookRecorder } from "../support/hook-recorder";
import { STACK_START_TIMEOUT_MS } from "../support/timeouts";
import { playRunShape, RUN_SHAPE_CONFIG, RUN_SHAPES } from "../support/run-shapes";
import { diffSnapshots, SdkMeter, sumOf, type MeterSnapshot } from "../../shared/aws/metering";

let loop: LoopStack;
let hooks: HookRecorder;
const meter = new SdkMeter();
beforeAll(async () => {
  hooks = await HookRecorder.start();
  const withRecorder = (providers: FakeProviders) => ({
    ...RUN_SHAPE_CONFIG(providers),
    // Some scenarios here stall on purpose: their silent fake makes the watchdog the only way out.
    agent: { idleTimeoutSeconds: STALL_IDLE_TIMEOUT_SECONDS },
    plugins: [hooks.plugin(["before_compaction", "after_compaction", "session_start", "session_end"])],
  });
  loop = await startLoopStack(withRecorder, { meter });
}, STACK_START_TIMEOUT_MS);
afterAll(async () => {
  await loop?.close();
  await hooks?.close();
});
afterEach(() => {
  const left = { openai: loop.oai.pending, anthropic: loop.anthropic.pending };
  // A failed scenario must not leave steps behind for the next one.
  loop.oai.clear();
  loop.anthropic.clear();
  expect(left).toEqual({ openai: 0, anthropic: 0 });
});

type Body = { messages: { role: string; content: unknown }[]; reasoning_effort?: string };
const bodies = (from: number) => loop.oai.requests.slice(from).map((r) => r.body as Body);
const systemOf = (body: Body) => String(body.messages.find((m) => m.role === "system")?.content ?? "");
const lastLifecycle = (run: RunTrace) => [...run.events].reverse().find((e) => e.stream === "lifecycle")!.data;
const perMinute = () => chat.error(429, openAIErrorBody("Rate limit reached for gpt-shape on requests per min (RPM): Limit 3, Used 3.", "requests", "rate_limit_exceeded"));

describe("the three measured run shapes", () => {
  it.each(RUN_SHAPES.map((shape) => [shape.name, shape] as const))("%s", async (_name, shape) => {
    const run = await playRunShape(loop, shape, `shape-${shape.name}`, () => meter.snapshot());
    expect(run.status).toBe("ok");
    expect(run.states).toEqual(shape.expected.states);
    expect(decisionLabels(run.decisions)).toEqual(shape.expected.decisions);
    // Not a goal check: the figures for the report (benchmarks own the cost model).
    const used = diffSnapshots(run.before as MeterSnapshot, meter.snapshot());
    console.log(`run shape ${shape.name}: ${run.states.length} transitions, DynamoDB ${sumOf(used, "dynamodb", "writeUnits")} WRU / ${sumOf(used, "dynamodb", "readUnits")} RRU`);
  });
});

describe("same-model retries", () => {
  it("short-window rate limits wait 10 s, 20 s, 30 s in a Wait state, then end blocked with a user-facing error", async () => {
    loop.oai.enqueue(perMinute(), perMinute(), perMinute(), perMinute());
    const run = await loop.run("hi");
    expect(decisionLabels(run.decisions)).toEqual(["wait:10", "wait:20", "wait:30", "finalize:error:rate_limit"]);
    expect(run.states.filter((s) => s === "WaitBeforeRetry")).toHaveLength(3);
    expect(run.record.error).toBe(USER_ERRORS.rateLimited);
    expect(lastLifecycle(run)).toMatchObject({ phase: "error", livenessState: "blocked", kind: "rate_limit" });
    expect(run.meta).toMatchObject({ error: { kind: "rate_limit" }, livenessState: "blocked", counters: { rateLimitRetries: 3 } });
  });

  it("a recorded 429 with retry-after headers waits as advised (at least the 10 s step)", async () => {
    loop.oai.enqueue(httpErrorFixture("openai/error-429-rate-limit.json", CHAT_PATH), chat.text("ok"));
    const run = await loop.run("hi");
    expect(decisionLabels(run.decisions)).toEqual(["wait:10", "finalize:ok:completed"]);
  });

  it("a daily quota (long window) is not retried on the same model", async () => {
    loop.oai.enqueue(chat.error(429, openAIErrorBody("Rate limit reached for gpt-shape on requests per day (RPD): Limit 200, Used 200.", "requests", "rate_limit_exceeded")));
    const run = await loop.run("hi");
    expect(decisionLabels(run.decisions)).toEqual(["finalize:error:rate_limit"]);
  });

  it("an overloaded provider is retried with the whole chain after a 3 s wait", async () => {
    loop.anthropic.enqueue(anthropicMessages.error(529, "overloaded_error", "Overloaded"), anthropicMessages.text("Back."));
    const run = await loop.run("hi", { request: { model: "anthropic/claude-solo" } });
    expect(run.status).toBe("ok");
    expect(run.decisions[0]).toEqual({ action: "wait", waitSeconds: 3, reason: "overload_chain_retry" });
  });

  it("silent 5xx errors are resubmitted quietly", async () => {
    loop.oai.enqueue(httpErrorFixture("openai/error-500-server.json", CHAT_PATH), chat.text("fine"));
    const run = await loop.run("hi");
    expect(decisionLabels(run.decisions)).toEqual(["attempt:silent_retry", "finalize:ok:completed"]);
    expect(run.meta).toMatchObject({ attempts: 2, counters: { silentErrorRetries: 1 } });
  });

  it("a stream that stalls past the idle timeout is retried once on the same model (no fallback configured)", async () => {
    loop.oai.enqueue(chat.stall(), chat.text("complete answer"));
    const run = await loop.run("hi");
    expect(decisionLabels(run.decisions)).toEqual(["attempt:same_model_idle_retry", "finalize:ok:completed"]);
    expect(run.meta).toMatchObject({ counters: { idleTimeoutRetries: 1, consecutiveIdleTimeouts: 1 } });
  });

  it("a stall after visible output is not replayed on the same model: it ends with the idle-timeout error", async () => {
    loop.oai.enqueue(chat.stall({ text: "Partial ans" }));
    const run = await loop.run("hi");
    expect(decisionLabels(run.decisions)).toEqual(["finalize:error:timeout"]);
    expect(lastLifecycle(run)).toMatchObject({ phase: "error", kind: "timeout", livenessState: "blocked" });
  });

  it("a completion without any assistant message is resubmitted once, without an instruction", async () => {
    const from = loop.oai.requests.length;
    loop.oai.enqueue(chat.stream({ text: "" }), chat.text("There."));
    const run = await loop.run("hello?");
    expect(decisionLabels(run.decisions)).toEqual(["attempt:missing_assistant_retry", "finalize:ok:completed"]);
    expect(systemOf(bodies(from)[1])).toBe(systemOf(bodies(from)[0]));
  });

  it("an empty completion gets one continuation in the system prompt; the user message is not re-appended", async () => {
    const from = loop.oai.requests.length;
    loop.oai.enqueue(chat.stream({ text: [" "] }), chat.text("Now visible."));
    const run = await loop.run("say something", { sessionKey: "empty-1" });
    expect(decisionLabels(run.decisions)).toEqual(["attempt:empty_response_retry", "finalize:ok:completed"]);
    const [first, second] = bodies(from);
    expect(systemOf(first)).not.toContain(CONTINUATION_INSTRUCTIONS.empty_response);
    expect(systemOf(second)).toContain(CONTINUATION_INSTRUCTIONS.empty_response);
    expect(second.messages.filter((m) => m.role === "user")).toHaveLength(1);
    // Usage of the wasted attempt counts too.
    expect(run.meta).toMatchObject({ usage: { input: 42, output: 18 }, trace: { attempts: [{ outcome: "empty_response" }, { outcome: "completed" }] } });
  });

  it("a reasoning-only completion gets two continuations, then the incomplete-turn error", async () => {
    const thinkingOnly = () => chat.stream({ reasoning: "Let me think about it.", text: "" });
    loop.oai.enqueue(thinkingOnly(), thinkingOnly(), thinkingOnly());
    const run = await loop.run("hmm");
    expect(decisionLabels(run.decisions)).toEqual(["attempt:reasoning_only_retry", "attempt:reasoning_only_retry", "finalize:error:reasoning_only"]);
    expect(run.record.error).toBe(USER_ERRORS.incompleteTurn);
    expect(lastLifecycle(run)).toMatchObject({ phase: "error", livenessState: "abandoned", kind: "incomplete_turn" });
  });
});

describe("terminal errors: no retry, a user-facing message, error.kind", () => {
  it.each([
    ["401 invalid key", httpErrorFixture("openai/error-401-invalid-api-key.json", CHAT_PATH), "auth"],
    ["402 billing", chat.error(402, openAIErrorBody("Payment required.", "billing_error")), "billing"],
    ["403 forbidden", chat.error(403, openAIErrorBody("Project does not have access to model.", "permission_error")), "auth_permanent"],
    ["400 image size", chat.error(400, openAIErrorBody("messages.0.content.1.image: image exceeds 5 MB maximum", "invalid_request_error")), "image_size"],
    ["400 malformed request", chat.error(400, openAIErrorBody("Invalid schema for function 'calculator'.", "invalid_request_error")), "format"],
  ] as const)("%s", async (_label, step, kind) => {
    loop.oai.enqueue(step);
    const run = await loop.run("hi");
    expect(run.decisions).toHaveLength(1);
    expect(run.decisions[0]).toMatchObject({ action: "finalize", status: "error", errorKind: kind, livenessState: "blocked" });
    expect(run.record.error).toBeTruthy();
    expect(lastLifecycle(run)).toMatchObject({ phase: "error", kind, livenessState: "blocked", error: run.record.error });
    expect(run.meta).toMatchObject({ error: { kind }, attempts: 1 });
  });

  it("a role-ordering rejection is repaired once: the retry sends strictly alternating turns; a second rejection ends the run", async () => {
    const roleOrdering = () => chat.error(400, openAIErrorBody("Invalid request: incorrect role information", "invalid_request_error"));
    const sessionKey = `role-ordering-${Date.now()}`;
    // A run that failed leaves its user message unanswered: the next message makes two user turns in a row.
    loop.oai.enqueue(chat.error(400, openAIErrorBody("Invalid schema for function 'calculator'.", "invalid_request_error")));
    expect((await loop.run("first question", { sessionKey })).status).toBe("error");
    const from = loop.oai.requests.length;
    loop.oai.enqueue(roleOrdering(), chat.text("Repaired."));
    const run = await loop.run("second question", { sessionKey });
    expect(decisionLabels(run.decisions)).toEqual(["attempt:role_ordering_repair", "finalize:ok:completed"]);
    const [rejectedBody, retriedBody] = bodies(from);
    const roles = (body: Body) => body.messages.filter((m) => m.role !== "system").map((m) => m.role);
    expect(roles(rejectedBody)).toEqual(["user", "user"]);
    expect(roles(retriedBody)).toEqual(["user"]);
    expect(String(retriedBody.messages.find((m) => m.role === "user")?.content)).toBe("first question\n\nsecond question");

    loop.oai.enqueue(roleOrdering(), roleOrdering());
    const failed = await loop.run("third", { sessionKey: `${sessionKey}-b` });
    expect(decisionLabels(failed.decisions)).toEqual(["attempt:role_ordering_repair", "finalize:error:role_ordering"]);
    expect(failed.record.error).toBe(USER_ERRORS.roleOrdering);
    expect(lastLifecycle(failed)).toMatchObject({ phase: "error", kind: "role_ordering", livenessState: "blocked" });
  });

  it("a 'thinking level not supported' error downgrades the level and retries", async () => {
    const from = loop.oai.requests.length;
    const unsupported = "Unsupported value: 'reasoning_effort' does not support 'minimal' with this model. Supported values are: 'low', 'medium', and 'high'.";
    loop.oai.enqueue(chat.error(400, openAIErrorBody(unsupported, "invalid_request_error", "unsupported_value", "reasoning_effort")), chat.text("ok"));
    const run = await loop.run("hi", { request: { thinking: "minimal" } });
    expect(decisionLabels(run.decisions)).toEqual(["attempt:thinking_downgrade", "finalize:ok:completed"]);
    expect(bodies(from).map((b) => b.reasoning_effort)).toEqual(["minimal", "low"]);
  });
});

describe("context overflow, compaction and the post-compaction guard", () => {
  const prime = async (sessionKey: string) => {
    for (const topic of ["foxes", "dogs"]) {
      loop.oai.enqueue(chat.text(`All about ${topic}: ${"details ".repeat(400)}`));
      expect((await loop.run(`Tell me about ${topic}. ${"context ".repeat(100)}`, { sessionKey })).status).toBe("ok");
    }
  };

  it("compacts after a 400 context-length error; the next attempt sees the summary plus the kept tail", async () => {
    await prime("overflow-1");
    const from = loop.oai.requests.length;
    loop.oai.enqueue(httpErrorFixture("openai/error-400-context-length.json", CHAT_PATH), chat.text("SUMMARY OF FOXES AND DOGS"), chat.text("Done."));
    const run = await loop.run("What did we cover?", { sessionKey: "overflow-1" });
    expect(decisionLabels(run.decisions)).toEqual(["compact:overflow", "finalize:ok:completed"]);
    const [, summaryCall, retry] = bodies(from);
    expect(JSON.stringify(summaryCall.messages)).toContain("Tell me about foxes");
    const userTurns = retry.messages.filter((m) => m.role === "user").map((m) => String(m.content));
    expect(userTurns[0].startsWith(SUMMARY_PREFIX) && userTurns[0].includes("SUMMARY OF FOXES AND DOGS")).toBe(true);
    expect(userTurns[userTurns.length - 1]).toContain("What did we cover?");
    expect(JSON.stringify(retry.messages)).not.toContain("Tell me about foxes");
    expect(systemOf(retry)).toContain(CONTINUATION_INSTRUCTIONS.compaction);
    const compaction = run.events.filter((e) => e.stream === "compaction").map((e) => e.data);
    expect(compaction).toEqual([expect.objectContaining({ phase: "start" }), expect.objectContaining({ phase: "end", willRetry: true, completed: true })]);
    const session = await getSession(loop.stack.deps.db, "overflow-1");
    const entries = await readEntries(loop.stack.deps.db, session!.sessionId);
    expect(entries.filter((e) => e.kind === "compaction")).toHaveLength(1);
    expect(entries.filter((e) => (e.kind ?? "message") === "message").length).toBeGreaterThanOrEqual(6); // history kept
    const record = entries.find((e) => e.kind === "compaction");
    // Fired inside the attempt function's sandbox, by a plugin bundled into it.
    const ofRun = (e: Record<string, unknown>) => e.runId === run.runId;
    const seen = [...hooks.of("before_compaction", ofRun).map((e) => `before:${e.messageCount}`), ...hooks.of("after_compaction", ofRun).map((e) => `after:${e.tokenCount}`)];
    expect(seen).toEqual([expect.stringMatching(/^before:\d+$/), `after:${record?.kind === "compaction" ? record.compaction.tokensAfter : -1}`]);
    // The summary call is metered like the model call after it (21 + 9 tokens each): the attempt's usage and the run's spend.
    const attempts = await listAttempts(loop.stack.deps.db, run.runId);
    expect(attempts.map((a) => a.usage)).toEqual([expect.objectContaining({ input: 0, output: 0 }), expect.objectContaining({ input: 42, output: 18 })]);
    expect(run.meta).toMatchObject({ usage: { input: 42, output: 18 } });
    expect(await readSpendItem(loop.stack.deps.db, keys.runUsage(run.runId))).toMatchObject({ calls: 3, tokens: 60 }); // the rejected call counts, with no tokens
  });

  it("Anthropic's 'prompt is too long' is an overflow too", async () => {
    await prime("overflow-2");
    loop.anthropic.enqueue(
      anthropicMessages.error(400, "invalid_request_error", "prompt is too long: 208310 tokens > 200000 maximum"),
      anthropicMessages.text("A summary."),
      anthropicMessages.text("Answer."),
    );
    const run = await loop.run("And now?", { sessionKey: "overflow-2", request: { model: "anthropic/claude-solo" } });
    expect(decisionLabels(run.decisions)).toEqual(["compact:overflow", "finalize:ok:completed"]);
  });

  it("a short session the estimate keeps whole is compacted with the provider's numbers (issue 18)", async () => {
    // 128000-token window, 130321 tokens counted: far more than our estimate of a two-line session.
    loop.oai.enqueue(chat.text("Hello there."));
    expect((await loop.run("hi", { sessionKey: "overflow-short" })).status).toBe("ok");
    const from = loop.oai.requests.length;
    loop.oai.enqueue(httpErrorFixture("openai/error-400-context-length.json", CHAT_PATH), chat.text("SUMMARY: the user greeted."), chat.text("Done."));
    const run = await loop.run("What did we cover?", { sessionKey: "overflow-short" });
    expect(decisionLabels(run.decisions)).toEqual(["compact:overflow", "finalize:ok:completed"]);
    expect(run.decisions[0]).toMatchObject({ tokenCount: 130_321 });
    const [, summaryCall, retry] = bodies(from);
    expect(JSON.stringify(summaryCall.messages)).toContain("User: hi");
    expect(JSON.stringify(summaryCall.messages)).not.toContain("What did we cover?");
    const userTurns = retry.messages.filter((m) => m.role === "user").map((m) => String(m.content));
    expect(userTurns[0]).toContain("SUMMARY: the user greeted.");
    // The user message being answered stays verbatim.
    expect(userTurns[userTurns.length - 1]).toBe("What did we cover?");
    expect(run.meta).toMatchObject({ counters: { overflowCompactions: 1 } });
    // The attempt after the compaction reports it (AttemptResult.compactionCount).
    expect((await listAttempts(loop.stack.deps.db, run.runId)).map((a) => a.compactionCount)).toEqual([0, 1]);
  });

  it("gives up with OpenClaw's overflow text after 3 compactions and a truncation; no real conversation is a no-op, not a failure", async () => {
    const overflow = () => httpErrorFixture("openai/error-400-context-length.json", CHAT_PATH);
    loop.oai.enqueue(overflow(), overflow(), overflow(), overflow());
    const run = await loop.run("One question, nothing before it", { sessionKey: "overflow-3" });
    // Nothing before the current turn: each compaction continues without a summary call; then truncation finds nothing.
    expect(decisionLabels(run.decisions)).toEqual(["compact:overflow", "compact:overflow", "compact:overflow", "truncate", "finalize:error:context_overflow"]);
    expect(run.record.error).toBe("Context overflow: prompt too large for the model. Try /reset (or /new) to start a fresh session, or use a larger-context model.");
    expect(lastLifecycle(run)).toMatchObject({ kind: "context_overflow", livenessState: "blocked" });
    expect(run.events.filter((e) => e.stream === "compaction").map((e) => e.data.completed).filter((c) => c !== undefined)).toEqual([false, false, false]);
  });

  it("aborts when the same tool call and result repeat 3 times right after a compaction", async () => {
    await prime("guard-1");
    const same = () => chat.toolCall("calculator", { expression: "6*7" });
    loop.oai.enqueue(httpErrorFixture("openai/error-400-context-length.json", CHAT_PATH), chat.text("summary"), same(), same(), same());
    const run = await loop.run("compute", { sessionKey: "guard-1" });
    expect(decisionLabels(run.decisions)).toEqual(["compact:overflow", "finalize:error:compaction_loop_persisted"]);
    expect(run.record.error).toContain("calculator");
    expect(lastLifecycle(run)).toMatchObject({ kind: "compaction_loop" });
  });
});

describe("precheck routes (the attempt measures, the loop recovers)", () => {
  /** Puts turns into a session's transcript directly (arrange), as earlier runs would have. */
  async function seed(sessionKey: string, turns: Message[][]) {
    const { db } = loop.stack.deps;
    const session = await resolveSession(db, sessionKey);
    let claim = await claimWriter(db, session.sessionId, "seed-run", { leaseMs: 10_000, acquireTimeoutMs: 5_000 });
    for (const turn of turns) claim = await appendTurn(db, claim, turn);
    await releaseWriter(db, claim);
    return session.sessionId;
  }
  const toolTurn = (content: string): Message[][] => [
    [{ role: "user", content: "Read the log." }],
    [
      { role: "assistant", content: [{ type: "tool_call", id: "call_log", name: "calculator", args: { expression: "1" } }], provider: "openai", model: "gpt-tiny", stopReason: "tool_calls", usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 } },
      { role: "tool_result", toolCallId: "call_log", toolName: "calculator", content, isError: false },
    ],
    [{ role: "assistant", content: [{ type: "text", text: "I read it." }], provider: "openai", model: "gpt-tiny", stopReason: "stop", usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 } }],
  ];
  const tiny = { model: "openai/gpt-tiny" };

  it("truncate_tool_results_only: shortens the stored tool result (head + tail), no failure counter, then the model answers", async () => {
    const sessionId = await seed("precheck-truncate", toolTurn(`LOG START\n${"x".repeat(30_000)}\nerror: LOG END`));
    const from = loop.oai.requests.length;
    loop.oai.enqueue(chat.text("The log ends with an error."));
    const run = await loop.run("What does it say?", { sessionKey: "precheck-truncate", request: tiny });
    expect(decisionLabels(run.decisions)).toEqual(["truncate", "finalize:ok:completed"]);
    expect(run.states).toEqual(["Attempt", "Route", "Attempt", "Route", "Done"]);
    expect(run.meta).toMatchObject({ counters: { overflowCompactions: 0 } });
    const sent = JSON.stringify(bodies(from)[0].messages);
    expect(sent).toContain("LOG START");
    expect(sent).toContain("LOG END");
    expect(sent.length).toBeLessThan(25_000);
    const entries = await readEntries(loop.stack.deps.db, sessionId);
    expect(entries.filter((e) => e.kind === "rewrite")).toHaveLength(1);
  });

  it("compact_only: compacts before any model call, then answers", async () => {
    const long = (i: number): Message[][] => [
      [{ role: "user", content: `Topic ${i}?` }],
      [{ role: "assistant", content: [{ type: "text", text: `Topic ${i}: ${"words ".repeat(2330)}` }], provider: "openai", model: "gpt-tiny", stopReason: "stop", usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 } }],
    ];
    await seed("precheck-compact", [...long(1), ...long(2)]);
    // ~28k chars: over the 8k-token prompt budget of a 16k window; summarised in two window-sized calls.
    loop.oai.enqueue(chat.text("SUMMARY of topic 1"), chat.text("SUMMARY of topics 1 and 2"), chat.text("Answer."));
    const run = await loop.run("Which topics?", { sessionKey: "precheck-compact", request: tiny });
    expect(decisionLabels(run.decisions)).toEqual(["compact:precheck", "finalize:ok:completed"]);
    expect(run.meta).toMatchObject({ counters: { overflowCompactions: 1 } });
  });

  it("a timeout compacts only when the prompt used more than 65% of the window", async () => {
    const turn = (i: number): Message[][] => [
      [{ role: "user", content: `Part ${i}` }],
      [{ role: "assistant", content: [{ type: "text", text: "z".repeat(140_000) }], provider: "openai", model: "gpt-shape", stopReason: "stop", usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 } }],
    ];
    // ~140k tokens of a 200k window: fits the precheck (90 % budget), but a stall on it is worth a compaction.
    await seed("timeout-heavy", [1, 2, 3, 4].flatMap(turn));
    loop.oai.enqueue(chat.stall(), chat.text("SUMMARY of four parts"), chat.text("Answer."));
    const heavy = await loop.run("Go on.", { sessionKey: "timeout-heavy" });
    expect(decisionLabels(heavy.decisions)).toEqual(["compact:timeout", "finalize:ok:completed"]);
    expect(heavy.meta).toMatchObject({ counters: { timeoutCompactions: 1 } });
    // A light prompt that times out is retried as it is (no fallback configured), not compacted.
    loop.oai.enqueue(chat.stall(), chat.text("Answer."));
    const light = await loop.run("Go on.");
    expect(decisionLabels(light.decisions)).toEqual(["attempt:same_model_idle_retry", "finalize:ok:completed"]);
  });

  it("compact_then_truncate: compacts and truncates in one step", async () => {
    await seed("precheck-both", toolTurn(`HEAD ${"y".repeat(60_000)} TAIL`));
    loop.oai.enqueue(chat.text("SUMMARY: a log was read"), chat.text("Answer."));
    const run = await loop.run("Summarise the log.", { sessionKey: "precheck-both", request: tiny });
    expect(run.decisions[0]).toEqual({ action: "compact", trigger: "precheck", thenTruncate: true, tokenCount: expect.any(Number) });
    expect(run.status).toBe("ok");
  });
});

describe("sessions", () => {
  it("/new starts a new session id under the same key; the old transcript is kept and closed", async () => {
    loop.oai.enqueue(chat.text("first answer"));
    await loop.run("remember the number 7", { sessionKey: "reset-1" });
    const before = await getSession(loop.stack.deps.db, "reset-1");
    const from = loop.oai.requests.length;
    loop.oai.enqueue(chat.text("Hello again!"));
    const run = await loop.run("/new", { sessionKey: "reset-1" });
    expect(run.status).toBe("ok");
    const after = await getSession(loop.stack.deps.db, "reset-1");
    expect(after!.sessionId).not.toBe(before!.sessionId);
    expect(after!.previousSessionIds).toEqual([before!.sessionId]);
    const [greeting] = bodies(from);
    expect(JSON.stringify(greeting.messages)).not.toContain("number 7");
    expect(greeting.messages.filter((m) => m.role === "user").map((m) => m.content)).toEqual([NEW_SESSION_PROMPT]);
    const old = await readEntries(loop.stack.deps.db, before!.sessionId);
    expect(old[0]).toMatchObject({ kind: "note", note: { type: "session_start" } });
    expect(old[old.length - 1]).toMatchObject({ kind: "note", note: { type: "session_end", otherSessionId: after!.sessionId } });
    const fresh = await readEntries(loop.stack.deps.db, after!.sessionId);
    expect(fresh.map((e) => e.kind ?? e.message.role)).toEqual(["note", "user", "assistant"]);
    const ofSession = (e: Record<string, unknown>) => e.sessionKey === "reset-1";
    const seen = hooks.calls.filter((c) => c.hook.startsWith("session_") && ofSession(c.event)).map((c) => `${c.hook === "session_start" ? "start" : "end"}:${c.event.sessionId}`);
    expect(seen).toEqual([`start:${before!.sessionId}`, `end:${before!.sessionId}`, `start:${after!.sessionId}`]);
    expect(isSummaryMessage({ role: "user", content: NEW_SESSION_PROMPT })).toBe(false);
  });

  it("/new with text runs that text in the new session", async () => {
    loop.oai.enqueue(chat.text("one"), chat.text("two"));
    await loop.run("old topic", { sessionKey: "reset-2" });
    const from = loop.oai.requests.length;
    await loop.run("/new what is 2+2?", { sessionKey: "reset-2" });
    const [body] = bodies(from);
    expect(body.messages.filter((m) => m.role === "user").map((m) => m.content)).toEqual(["what is 2+2?"]);
  });
});

/** Longer than one coalescing buffer (1024 chars), so part of it is on the wire before the failure. */
const PARTIAL = `${"A partial answer that is long enough to be streamed before the failure. ".repeat(20)}and then`;

describe("a failed attempt's streamed text", () => {
  it("is retracted when the run ends in error, so no client is left showing half an answer", async () => {
    loop.oai.enqueue(
      chat.midStreamError({ text: PARTIAL }, { message: "The server had an error while processing your request.", type: "server_error" }),
    );
    const run = await loop.run("hi");
    expect(run.status).toBe("error");
    const assistant = run.events.filter((e) => e.stream === "assistant").map((e) => e.data as { text: string; delta: string; reset?: boolean });
    const shown = assistant.map((d) => d.delta).join("");
    expect(shown.length).toBeGreaterThan(0);
    expect(PARTIAL.startsWith(shown)).toBe(true);
    // The last assistant event takes the text back; the lifecycle error follows it.
    expect(assistant[assistant.length - 1]).toEqual({ text: "", delta: "", reset: true, reason: "failed" });
    const lastTwo = run.events.slice(-2).map((e) => e.stream);
    expect(lastTwo).toEqual(["assistant", "lifecycle"]);
  });
});
