/**
 * Outer-loop scenarios on the real state machine with several auth profiles
 * (three OpenAI keys) and a model fallback chain (a small-window Anthropic
 * model): profile rotation with cooldowns shared by every run, fallback,
 * the idle-timeout breaker across rotations, compaction sized for the model
 * that runs next, and continue-as-new for long runs.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { markProfileFailure, readProfileHealth } from "../../shared/aws/auth-profiles";
import { getSession } from "../../shared/aws/sessions";
import { readEntries } from "../../shared/aws/transcript";
import { isCoolingDown } from "../../shared/core/auth-cooldown";
import { USER_ERRORS } from "../../shared/core/loop-texts";
import { CHAT_PATH, chat, openAIErrorBody } from "../support/fake-openai-server";
import { messages as anthropicMessages } from "../support/fake-anthropic-server";
import { httpErrorFixture } from "../support/scripted-sse-server";
import { STACK_START_TIMEOUT_MS } from "../support/timeouts";
import { decisionLabels, STALL_IDLE_TIMEOUT_SECONDS, startLoopStack, type LoopStack } from "../support/loop-stack";

let loop: LoopStack;
beforeAll(async () => {
  loop = await startLoopStack(({ openai, anthropic }) => ({
    model: "openai/gpt-main",
    fallbackModels: ["anthropic/claude-small"],
    providers: {
      openai: { baseURL: openai.baseURL, profiles: [{ id: "key-a", apiKey: "sk-a" }, { id: "key-b", apiKey: "sk-b" }, { id: "key-c", apiKey: "sk-c" }] },
      anthropic,
    },
    context: { modelContextWindows: { "anthropic/claude-small": 16_000 } },
    agent: { idleTimeoutSeconds: STALL_IDLE_TIMEOUT_SECONDS },
  }));
}, STACK_START_TIMEOUT_MS);
afterAll(async () => loop?.close());
afterEach(async () => {
  const left = { openai: loop.oai.pending, anthropic: loop.anthropic.pending };
  loop.oai.clear();
  loop.anthropic.clear();
  await loop.clearProfileHealth();
  expect(left).toEqual({ openai: 0, anthropic: 0 });
});

const keysUsed = (from: number) => loop.oai.requests.slice(from).map((r) => String(r.headers.authorization).replace("Bearer ", ""));
const perMinute = () => chat.error(429, openAIErrorBody("Rate limit reached for gpt-main on tokens per min (TPM): Limit 30000, Used 30000.", "tokens", "rate_limit_exceeded"));

/** Longer than one coalescing buffer (1024 chars), so part of it is on the wire before the failure. */
const PARTIAL = `${"A partial answer that is long enough to be streamed before the failure. ".repeat(20)}and then`;

describe("auth profiles", () => {
  it("a failed attempt's streamed text is retracted before the next key streams: the deltas after the reset are the final answer", async () => {
    loop.oai.enqueue(
      chat.midStreamError({ text: PARTIAL }, { message: "The server had an error while processing your request.", type: "server_error" }),
      chat.text("The whole answer."),
    );
    const run = await loop.run("hi");
    expect(run.status).toBe("ok");
    expect(decisionLabels(run.decisions)).toEqual(["attempt:rotate_profile", "finalize:ok:completed"]);
    const assistant = run.events.filter((e) => e.stream === "assistant").map((e) => e.data as { text: string; delta: string; reset?: boolean });
    const resets = assistant.flatMap((d, i) => (d.reset ? [i] : []));
    expect(resets).toHaveLength(1);
    expect(assistant[resets[0]]).toEqual({ text: "", delta: "", reset: true, reason: "failed" });
    const shown = assistant.slice(0, resets[0]).map((d) => d.delta).join("");
    expect(shown.length).toBeGreaterThan(0);
    expect(PARTIAL.startsWith(shown)).toBe(true);
    expect(assistant.slice(resets[0] + 1).map((d) => d.delta).join("")).toBe("The whole answer.");
    expect(assistant[assistant.length - 1].text).toBe("The whole answer.");
  });

  it("a 401 rotates to the next key; the failed key then cools down for every run", async () => {
    // Arrange: two earlier failures of key-a, long over (a clock 10 min back), so this 401 is its third:
    // a 5-minute cooldown, which the next run certainly starts inside (a first failure's 30 s did not,
    // on a loaded machine). The cooldown is decided on the functions' own clock.
    const tenMinutesAgo = { ...loop.stack.deps.db, now: () => Date.now() - 10 * 60_000 };
    for (let i = 0; i < 2; i += 1) await markProfileFailure(tenMinutesAgo, "openai", "key-a", "auth", "openai/gpt-main");
    let from = loop.oai.requests.length;
    loop.oai.enqueue(httpErrorFixture("openai/error-401-invalid-api-key.json", CHAT_PATH), chat.text("with key b"));
    const run = await loop.run("hi");
    expect(decisionLabels(run.decisions)).toEqual(["attempt:rotate_profile", "finalize:ok:completed"]);
    expect(keysUsed(from)).toEqual(["sk-a", "sk-b"]);
    const health = await readProfileHealth(loop.stack.deps.db, "openai");
    expect(isCoolingDown(health.get("key-a"), "openai/gpt-main", Date.now())).toBe(true);
    expect(health.get("key-a")).toMatchObject({ errorCount: 3 });
    // Another session's run skips key-a from its first request.
    from = loop.oai.requests.length;
    loop.oai.enqueue(chat.text("fresh run"));
    expect((await loop.run("hello from elsewhere")).status).toBe("ok");
    expect(keysUsed(from)).toEqual(["sk-b"]);
  });

  it("rate limits: 3 same-model waits, one profile rotation, then the fallback model; usage and trace cover every attempt", async () => {
    const from = loop.oai.requests.length;
    loop.oai.enqueue(perMinute(), perMinute(), perMinute(), perMinute(), perMinute());
    loop.anthropic.enqueue(anthropicMessages.text("Answer from the fallback."));
    const run = await loop.run("hi");
    expect(decisionLabels(run.decisions)).toEqual([
      "wait:10",
      "wait:20",
      "wait:30",
      "attempt:rotate_profile",
      "attempt:fallback_model",
      "finalize:ok:completed",
    ]);
    expect(keysUsed(from)).toEqual(["sk-a", "sk-a", "sk-a", "sk-a", "sk-b"]);
    expect(run.meta).toMatchObject({
      attempts: 6,
      model: "anthropic/claude-small",
      trace: { winner: { provider: "anthropic", model: "claude-small" }, fallbackUsed: true },
    });
    const trace = (run.meta.trace as { attempts: { model: string; failureKind?: string }[] }).attempts;
    expect(trace.map((a) => a.failureKind ?? "ok")).toEqual(["rate_limit", "rate_limit", "rate_limit", "rate_limit", "rate_limit", "ok"]);
    expect(run.record.result?.payloads[0]?.text).toBe("Answer from the fallback.");
  });

  it("every profile cooling down sends the run straight to the fallback model, without calling the primary", async () => {
    loop.oai.enqueue(chat.error(402, openAIErrorBody("Payment required.", "billing_error")), chat.error(402, openAIErrorBody("Payment required.", "billing_error")), chat.error(402, openAIErrorBody("Payment required.", "billing_error")));
    loop.anthropic.enqueue(anthropicMessages.text("fallback 1"), anthropicMessages.text("fallback 2"));
    const first = await loop.run("hi");
    expect(decisionLabels(first.decisions)).toEqual(["attempt:rotate_profile", "attempt:rotate_profile", "attempt:fallback_model", "finalize:ok:completed"]);
    const from = loop.oai.requests.length;
    const second = await loop.run("and again");
    expect(second.status).toBe("ok");
    expect(loop.oai.requests.length).toBe(from); // all three keys are disabled (billing): the primary was skipped
    expect(second.meta).toMatchObject({ trace: { fallbackUsed: true } });
  });
});

describe("fallback chain and breaker", () => {
  it("model_not_found goes straight to the fallback model and marks no profile", async () => {
    loop.oai.enqueue(httpErrorFixture("openai/error-404-model-not-found.json", CHAT_PATH));
    loop.anthropic.enqueue(anthropicMessages.text("ok"));
    const run = await loop.run("hi");
    expect(decisionLabels(run.decisions)).toEqual(["attempt:fallback_model", "finalize:ok:completed"]);
    expect((await readProfileHealth(loop.stack.deps.db, "openai")).size).toBe(0);
  });

  it("5 consecutive idle timeouts trip the breaker, whatever rotation and fallback happened in between", async () => {
    loop.oai.enqueue(chat.stall(), chat.stall(), chat.stall());
    loop.anthropic.enqueue(anthropicMessages.stall(), anthropicMessages.stall());
    const run = await loop.run("hi");
    expect(decisionLabels(run.decisions)).toEqual([
      "attempt:rotate_profile",
      "attempt:rotate_profile",
      "attempt:fallback_model",
      "attempt:same_model_idle_retry",
      "finalize:error:idle_timeout_breaker",
    ]);
    expect(run.record.error).toBe(USER_ERRORS.retryLimit);
    expect(run.meta).toMatchObject({ error: { kind: "retry_limit", message: USER_ERRORS.retryLimit }, livenessState: "blocked", counters: { consecutiveIdleTimeouts: 5 } });
  });

  it("compaction after a failover is sized for the smaller model that runs next", async () => {
    const sessionKey = "small-window";
    for (const topic of ["rivers", "mountains"]) {
      loop.oai.enqueue(chat.text(`${topic}: ${"a long and detailed explanation ".repeat(380)}`));
      expect((await loop.run(`Explain ${topic}.`, { sessionKey })).status).toBe("ok");
    }
    loop.oai.enqueue(httpErrorFixture("openai/error-404-model-not-found.json", CHAT_PATH));
    loop.anthropic.enqueue(
      anthropicMessages.error(400, "invalid_request_error", "prompt is too long: 17210 tokens > 16000 maximum"),
      // Sized with the provider's count (17210 for our ~6.6k estimate), each summariser call takes less: four calls.
      ...[1, 2, 3, 4].map((n) => anthropicMessages.text(`SUMMARY ${n}: rivers and mountains were explained.`)),
      anthropicMessages.text("Short answer."),
    );
    const run = await loop.run("Compare them.", { sessionKey });
    expect(decisionLabels(run.decisions)).toEqual(["attempt:fallback_model", "compact:overflow", "finalize:ok:completed"]);
    const session = await getSession(loop.stack.deps.db, sessionKey);
    const compaction = (await readEntries(loop.stack.deps.db, session!.sessionId)).find((e) => e.kind === "compaction");
    expect(compaction).toMatchObject({ kind: "compaction", compaction: { model: "anthropic/claude-small", contextTokens: 16_000, summary: "SUMMARY 4: rivers and mountains were explained." } });
  });
});

describe("one provider, two keys, a fallback model of the same provider (issue 18)", () => {
  let same: LoopStack;
  beforeAll(async () => {
    same = await startLoopStack(({ openai }) => ({
      model: "openai/gpt-primary",
      fallbackModels: ["openai/gpt-fallback"],
      providers: { openai: { baseURL: openai.baseURL, profiles: [{ id: "key-a", apiKey: "sk-a" }, { id: "key-b", apiKey: "sk-b" }] } },
    }));
  });
  afterAll(async () => same?.close());

  it("a key that failed authentication is not tried on the fallback model; attempts are numbered as they ran", async () => {
    same.oai.enqueue(
      httpErrorFixture("openai/error-401-invalid-api-key.json", CHAT_PATH),
      chat.error(503, openAIErrorBody("The server is overloaded or not ready yet.", "server_error")),
      chat.text("from the fallback with key b"),
    );
    const run = await same.run("hi");
    expect(run.status).toBe("ok");
    const used = same.oai.requests.map((r) => `${String(r.headers.authorization).replace("Bearer ", "")}/${(r.body as { model: string }).model}`);
    expect(used).toEqual(["sk-a/gpt-primary", "sk-b/gpt-primary", "sk-b/gpt-fallback"]);
    expect(decisionLabels(run.decisions)).toEqual(["attempt:rotate_profile", "attempt:fallback_model", "finalize:ok:completed"]);
    const trace = run.meta.trace as { attempts: { n: number; model: string }[] };
    expect(trace.attempts.map((a) => a.n)).toEqual([1, 2, 3]);
  });

  it("a model whose every key cools down is skipped without using up an attempt number", async () => {
    await same.clearProfileHealth();
    // Both keys rate-limited on the primary model by other runs (a per-model cooldown).
    for (const key of ["key-a", "key-b"]) await markProfileFailure(same.stack.deps.db, "openai", key, "rate_limit", "openai/gpt-primary");
    same.oai.enqueue(chat.text("fallback answers"));
    const run = await same.run("again");
    expect(decisionLabels(run.decisions)).toEqual(["finalize:ok:completed"]);
    const trace = run.meta.trace as { attempts: { n: number; model: string }[] };
    expect(trace.attempts).toEqual([expect.objectContaining({ n: 1, model: "openai/gpt-fallback" })]);
    expect(same.oai.requests.at(-1)?.headers.authorization).toBe("Bearer sk-a");
  });
});

describe("long runs", () => {
  let long: LoopStack;
  beforeAll(async () => {
    // A history budget that fits one iteration (core/history-budget.ts): the second one continues as new.
    long = await startLoopStack(({ openai }) => ({ model: "openai/gpt-long", providers: { openai }, loop: { maxHistoryEvents: 75 } }));
  });
  afterAll(async () => long?.close());

  it("continue as new in a fresh execution when the execution's history budget is used up; the run goes on seamlessly", async () => {
    long.oai.enqueue(perMinute(), chat.text("done after a continuation"));
    const run = await long.run("hi");
    expect(run.status).toBe("ok");
    // The run machine's Attempt hands the wait to the loop machine (`-l`), which continues as new (`-c1`).
    expect(run.executions).toHaveLength(3);
    expect(run.executions[1]).toMatch(new RegExp(`:${run.runId}-l$`));
    expect(run.executions[2]).toMatch(new RegExp(`:${run.runId}-c1$`));
    expect(run.executionStates).toEqual([
      ["Attempt"],
      ["Route", "WaitBeforeRetry", "Attempt", "Route", "Continued"],
      ["Route", "Attempt", "Route", "Done"],
    ]);
    expect(decisionLabels(run.decisions)).toEqual(["wait:10", "continue_as_new", "finalize:ok:completed"]);
    expect(run.record.executionArn).toBe(run.executions[2]);
    expect(run.record.result?.payloads[0]?.text).toBe("done after a continuation");
  });
});
