import { describe, expect, it } from "vitest";
import { runAttempt, type AttemptParams } from "../../shared/agent/attempt";
import { createMemoryLedger, UNCERTAIN_TOOL_RESULT } from "../../shared/agent/tool-ledger";
import { createUsageMeter } from "../../shared/agent/usage-meter";
import { AttemptResultSchema } from "../../shared/core/attempt-result";
import { CONTEXT_GUARD_MESSAGE } from "../../shared/core/context-budget";
import type { Message, UserMessage } from "../../shared/core/messages";
import { NO_SPEND } from "../../shared/core/spend";
import { checkTurn } from "../../shared/core/transcript";
import { countingTool, never, RecordingSink, ScriptedProvider, toolMap, user, type ScriptedTurn } from "./helpers";

/** A transcript that enforces the commit-time invariants, like the DynamoDB store does. */
class Transcript {
  readonly committed: Message[] = [];
  constructor(history: Message[] = [user("question")]) {
    this.committed.push(...history);
  }
  async commit(turn: Message[]): Promise<void> {
    const violations = checkTurn(this.committed[this.committed.length - 1], turn);
    if (violations.length > 0) throw new Error(`invariant: ${violations.join(",")}`);
    this.committed.push(...turn);
  }
  roles(): string[] {
    return this.committed.map((m) => m.role);
  }
}

function params(turns: ScriptedTurn[], overrides: Partial<AttemptParams> = {}, transcript = new Transcript()) {
  const provider = new ScriptedProvider(turns);
  const sink = new RecordingSink();
  const p: AttemptParams = {
    provider,
    model: "m",
    system: "sys",
    history: [...transcript.committed],
    tools: toolMap(countingTool("lookup"), countingTool("write", { mutating: true })),
    commitTurn: (turn) => transcript.commit(turn),
    sink,
    toolContext: { runId: "run1", sessionKey: "s", signal: new AbortController().signal },
    maxToolRounds: 8,
    maxToolResultChars: 4000,
    shouldYield: () => false,
    ...overrides,
  };
  return { p, provider, sink, transcript };
}

describe("the model <-> tool loop", () => {
  it("runs tools over several turns, commits each complete turn, and returns a structured, valid result", async () => {
    const { p, provider, sink, transcript } = params([
      { calls: [{ name: "lookup", args: { q: 1 } }, { name: "lookup", args: { q: 2 } }] },
      { text: "Thinking done. ", calls: [{ name: "write" }] },
      { text: "All done." },
    ]);
    const result = await runAttempt(p);
    expect(AttemptResultSchema.parse(result)).toEqual(result);
    expect(result).toMatchObject({
      outcome: { kind: "completed" },
      finalText: "All done.",
      textBlocks: ["All done."],
      modelTurns: 3,
      toolCalls: 3,
      hadSideEffects: true,
      toolErrors: [],
      usage: { input: 30, output: 15 },
      wastedUsage: { input: 0, output: 0 },
    });
    expect(result.tools.map((t) => [t.name, t.status])).toEqual([
      ["lookup", "completed"],
      ["lookup", "completed"],
      ["write", "completed"],
    ]);
    expect(transcript.roles()).toEqual(["user", "assistant", "tool_result", "tool_result", "assistant", "tool_result", "assistant"]);
    // Every request after the first carried the previous turn with its results.
    expect(provider.requests.map((r) => r.messages.length)).toEqual([1, 4, 6]);
    expect(sink.types().filter((t) => t.startsWith("tool"))).toEqual(["tool_start", "tool_result", "tool_start", "tool_result", "tool_start", "tool_result"]);
  });

  it("records tool errors in the transcript as error results and in the result", async () => {
    const failing = countingTool("flaky", { behaviour: () => Promise.reject(new Error("503 from upstream")) });
    const { p, transcript } = params([{ calls: [{ name: "flaky" }] }, { text: "It failed." }], { tools: toolMap(failing) });
    const result = await runAttempt(p);
    expect(result.toolErrors).toEqual([{ toolName: "flaky", message: "Error: 503 from upstream" }]);
    expect(transcript.committed[2]).toMatchObject({ role: "tool_result", isError: true, content: "Error: 503 from upstream" });
  });

  it("classifies a provider failure and counts its usage as wasted", async () => {
    const { p } = params([{ calls: [{ name: "lookup" }] }, { fail: { kind: "rate_limit", retryAfterMs: 5000 }, usage: { input: 7, output: 0 } }]);
    const result = await runAttempt(p);
    expect(result.outcome).toMatchObject({ kind: "failed", failure: { kind: "rate_limit", retryAfterMs: 5000 }, completedModelProgress: true, promptTokens: 7 });
    expect(result.wastedUsage).toMatchObject({ input: 7 });
    expect(result.usage).toMatchObject({ input: 17 });
  });

  it("tells a missing, an empty and a reasoning-only answer apart, and commits none of them", async () => {
    expect((await runAttempt(params([{ text: "" }]).p)).outcome).toEqual({ kind: "missing_assistant", hadSideEffects: false });
    expect((await runAttempt(params([{ text: "  \n" }]).p)).outcome).toEqual({ kind: "empty_response", hadSideEffects: false });
    const reasoning = params([{ thinking: "hmm, let me see" }]);
    const result = await runAttempt(reasoning.p);
    expect(result.outcome).toEqual({ kind: "reasoning_only", hadSideEffects: false });
    expect(result.wastedUsage.input).toBe(10);
    expect(reasoning.transcript.roles()).toEqual(["user"]);
  });

  it("flags an empty answer after a mutating tool ran, so the loop does not replay the turn", async () => {
    const { p } = params([{ calls: [{ name: "write" }] }, { text: " " }]);
    expect((await runAttempt(p)).outcome).toEqual({ kind: "empty_response", hadSideEffects: true });
  });

  it("yields before the Lambda deadline with every started turn committed (a fresh attempt continues)", async () => {
    let calls = 0;
    const transcript = new Transcript();
    const first = params([{ calls: [{ name: "lookup" }] }, { text: "never reached" }], { shouldYield: () => calls++ >= 1 }, transcript);
    const yielded = await runAttempt(first.p);
    expect(yielded.outcome).toEqual({ kind: "yielded" });
    expect(transcript.roles()).toEqual(["user", "assistant", "tool_result"]);
    const second = params([{ text: "Answer after the yield." }], {}, transcript);
    expect((await runAttempt(second.p)).outcome).toEqual({ kind: "completed" });
    expect(transcript.roles()).toEqual(["user", "assistant", "tool_result", "assistant"]);
  });

  it("yields when it runs out of tool rounds", async () => {
    const { p } = params([{ calls: [{ name: "lookup" }] }, { calls: [{ name: "lookup" }] }], { maxToolRounds: 2 });
    expect((await runAttempt(p)).outcome).toEqual({ kind: "yielded" });
  });

  it("an abort mid-tool still commits the turn with error results: no orphan tool_use", async () => {
    const controller = new AbortController();
    const slow = countingTool("slow", { behaviour: () => never() });
    const { p, transcript } = params([{ calls: [{ name: "slow" }, { name: "lookup" }] }], {
      tools: toolMap(slow, countingTool("lookup")),
      toolContext: { runId: "r", sessionKey: "s", signal: controller.signal },
    });
    setTimeout(() => controller.abort(), 20);
    const result = await runAttempt(p);
    expect(result.outcome).toEqual({ kind: "aborted" });
    expect(transcript.roles()).toEqual(["user", "assistant", "tool_result", "tool_result"]);
    expect(result.tools.map((t) => t.status)).toEqual(["aborted", "aborted"]);
  });

  it("stops at the context guard before the next model call when a tool result is too large for the window", async () => {
    const huge = countingTool("dump", { behaviour: () => "y".repeat(3000) });
    const { p, provider } = params([{ calls: [{ name: "dump" }] }, { text: "unreachable" }], {
      tools: toolMap(huge),
      contextWindowTokens: 1000, // 4000 chars: one result over 2000 is an overflow
      maxToolResultChars: 10_000,
    });
    const result = await runAttempt(p);
    expect(result.outcome).toMatchObject({ kind: "failed", failure: { kind: "context_overflow", message: CONTEXT_GUARD_MESSAGE }, contextTokens: 1000 });
    expect(provider.requests).toHaveLength(1);
  });
});

describe("spend budgets stop the loop", () => {
  it("stops before the next model call once the run's token budget is used up, counting every call", async () => {
    const recorded: number[] = [];
    const meter = createUsageMeter({
      budgets: { run: { maxTokens: 30 } },
      spentBefore: { run: { tokens: 10, costUsd: 0 }, session: NO_SPEND },
      persist: async (u) => {
        recorded.push(u.input + u.output);
      },
    });
    const { p, provider } = params([{ calls: [{ name: "lookup" }] }, { calls: [{ name: "lookup" }] }, { text: "x" }], { meter });
    const result = await runAttempt(p);
    expect(result.outcome).toEqual({ kind: "budget_exceeded", scope: "run", limit: "tokens", spent: 40, max: 30 });
    expect(provider.requests).toHaveLength(2);
    expect(recorded).toEqual([15, 15]);
  });

  it("stops on the session's cost budget, priced per model", async () => {
    const meter = createUsageMeter({
      pricing: { input: 1_000_000, output: 0 }, // $1 per input token
      budgets: { session: { maxCostUsd: 15 } },
      spentBefore: { run: NO_SPEND, session: { tokens: 0, costUsd: 6 } },
    });
    const { p } = params([{ calls: [{ name: "lookup" }] }, { text: "x" }], { meter });
    const result = await runAttempt(p);
    expect(result.outcome).toMatchObject({ kind: "budget_exceeded", scope: "session", limit: "cost", spent: 16 });
    expect(result.costUsd).toBe(10);
  });
});

describe("tool side effects run at most once (the ledger)", () => {
  it("a crash after a mutating tool completed: the next attempt resumes the turn and replays the result", async () => {
    const ledger = createMemoryLedger();
    const write = countingTool("write", { mutating: true, behaviour: () => "row 42 written" });
    const transcript = new Transcript();
    let crash = true;
    const crashing = params([{ calls: [{ id: "call_w", name: "write" }] }], {
      tools: toolMap(write),
      ledger,
      // The Lambda dies after the tool ran, before the turn reached the transcript.
      commitTurn: async (turn) => {
        if (crash) throw new Error("Lambda killed");
        await transcript.commit(turn);
      },
    }, transcript);
    await expect(runAttempt(crashing.p)).rejects.toThrow("Lambda killed");
    expect(write.calls).toHaveLength(1);
    expect(transcript.roles()).toEqual(["user"]); // nothing half-written

    crash = false;
    const retry = params([{ text: "Done: row 42." }], { tools: toolMap(write), ledger }, transcript);
    const result = await runAttempt(retry.p);
    expect(write.calls).toHaveLength(1); // not re-executed
    expect(retry.provider.requests).toHaveLength(1); // the model was not asked to re-plan the call
    expect(result.tools).toEqual([expect.objectContaining({ toolCallId: "call_w", status: "replayed" })]);
    expect(transcript.committed[2]).toMatchObject({ role: "tool_result", toolCallId: "call_w", content: "row 42 written", isError: false });
    expect(result.hadSideEffects).toBe(true);
    expect(await ledger.loadPendingTurn()).toBeUndefined();
  });

  it("a crash while a mutating tool runs: the call is uncertain, surfaced, and not re-run; unstarted calls run", async () => {
    const ledger = createMemoryLedger();
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const charge = countingTool("charge", { mutating: true, behaviour: () => (started(), never()) });
    const notify = countingTool("notify", { mutating: true, behaviour: () => "sent" });
    const transcript = new Transcript();
    const first = params([{ calls: [{ id: "c_charge", name: "charge" }, { id: "c_notify", name: "notify" }] }], { tools: toolMap(charge, notify), ledger }, transcript);
    void runAttempt(first.p); // this "Lambda" is frozen forever inside charge()
    await running;

    const retry = params([{ text: "The charge may have happened; please check." }], { tools: toolMap(charge, notify), ledger }, transcript);
    const result = await runAttempt(retry.p);
    expect(charge.calls).toHaveLength(1);
    expect(notify.calls).toHaveLength(1); // never started before: safe to run
    expect(result.uncertainToolCalls).toEqual([{ toolCallId: "c_charge", name: "charge" }]);
    expect(transcript.committed[2]).toMatchObject({ toolCallId: "c_charge", isError: true, content: UNCERTAIN_TOOL_RESULT });
    expect(transcript.committed[3]).toMatchObject({ toolCallId: "c_notify", isError: false, content: "sent" });
    expect(result.toolErrors.map((e) => e.toolName)).toEqual(["charge"]);
  });

  it("a pending turn that did reach the transcript is just cleared", async () => {
    const ledger = createMemoryLedger();
    const transcript = new Transcript();
    const first = params([{ calls: [{ id: "c1", name: "write" }] }, { text: "ok" }], { ledger }, transcript);
    await runAttempt(first.p);
    await ledger.savePendingTurn(transcript.committed[1] as never); // as if the clear was lost in a crash
    const again = params([{ text: "next" }], { ledger }, new Transcript([...transcript.committed, user("more")]));
    await runAttempt(again.p);
    expect(await ledger.loadPendingTurn()).toBeUndefined();
  });
});

/** A commit that lands only when the test says so (a DynamoDB write still in flight). */
function heldCommits(transcript: Transcript) {
  const held: { turn: Message[]; land(): void; fail(error: Error): void }[] = [];
  const commitTurn = (turn: Message[], options?: { behind?: boolean }) => {
    if (!options?.behind) return transcript.commit(turn);
    return new Promise<void>((resolve, reject) => {
      held.push({ turn, land: () => void transcript.commit(turn).then(resolve, reject), fail: reject });
    });
  };
  return { held, commitTurn };
}

/** Resolves once `check` holds, letting the attempt's promises run in between (no timers). */
async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !check(); i += 1) await new Promise<void>((resolve) => setImmediate(resolve));
  expect(check()).toBe(true);
}

describe("a tool turn is written behind the next model call", () => {
  it("asks the model again while the turn is still being written, and commits the answer only after it", async () => {
    // Prepare: the tool turn's commit is held
    const transcript = new Transcript();
    const { held, commitTurn } = heldCommits(transcript);
    const { p, provider } = params([{ calls: [{ id: "c1", name: "lookup" }] }, { text: "Found it." }], { commitTurn }, transcript);
    // Act
    const attempt = runAttempt(p);
    await until(() => provider.requests.length === 2);
    // Assess: the second call went out with the tool result while nothing of the turn had landed
    expect(provider.requests[1].messages.map((m) => m.role)).toEqual(["user", "assistant", "tool_result"]);
    expect(transcript.roles()).toEqual(["user"]);
    held[0].land();
    const result = await attempt;
    expect(result.outcome).toEqual({ kind: "completed" });
    expect(transcript.roles()).toEqual(["user", "assistant", "tool_result", "assistant"]);
  });

  it("fails with the turn's own write error, and commits nothing after it", async () => {
    const transcript = new Transcript();
    const { held, commitTurn } = heldCommits(transcript);
    const { p, provider } = params([{ calls: [{ id: "c1", name: "lookup" }] }, { text: "Found it." }], { commitTurn }, transcript);
    const attempt = runAttempt(p);
    await until(() => provider.requests.length === 2);
    held[0].fail(new Error("WriterFencedError: a newer task holds the claim"));
    await expect(attempt).rejects.toThrow("WriterFencedError");
    expect(transcript.roles()).toEqual(["user"]);
  });

  it("runs the next tool, and a mutating call's ledger write, only once the turn before has landed", async () => {
    const transcript = new Transcript();
    const { held, commitTurn } = heldCommits(transcript);
    const ledger = createMemoryLedger();
    const write = countingTool("write", { mutating: true, behaviour: () => "written" });
    const lookup = countingTool("lookup");
    const { p, provider } = params(
      [{ calls: [{ id: "c1", name: "lookup" }] }, { calls: [{ id: "c2", name: "lookup" }] }, { calls: [{ id: "c3", name: "write" }] }, { text: "Done." }],
      { commitTurn, ledger, tools: toolMap(lookup, write) },
      transcript,
    );
    const attempt = runAttempt(p);
    // The second read-only call waits for the first turn's commit before it runs.
    await until(() => provider.requests.length === 2 && held.length === 1);
    expect(lookup.calls).toHaveLength(1);
    held[0].land();
    await until(() => held.length === 2);
    expect(lookup.calls).toHaveLength(2);
    // The mutating turn is saved in the ledger only after the second turn landed.
    await until(() => provider.requests.length === 3);
    expect(await ledger.loadPendingTurn()).toBeUndefined();
    expect(write.calls).toHaveLength(0);
    held[1].land();
    await until(() => held.length === 3);
    expect(write.calls).toHaveLength(1);
    held[2].land();
    const result = await attempt;
    expect(result.outcome).toEqual({ kind: "completed" });
    expect(transcript.roles()).toEqual(["user", "assistant", "tool_result", "assistant", "tool_result", "assistant", "tool_result", "assistant"]);
    expect(await ledger.loadPendingTurn()).toBeUndefined();
  });

  it("commits a steering message only after the turn still being written", async () => {
    const transcript = new Transcript();
    const { held, commitTurn } = heldCommits(transcript);
    const steer: UserMessage = { role: "user", content: "also check the weekend" };
    let waiting = false;
    const steering = {
      pending: async () => false,
      // The port commits under the attempt's claim, after `beforeCommit` (shared/lanes/steering.ts).
      drain: async (beforeCommit?: () => Promise<void>) => {
        if (!waiting) return [];
        waiting = false;
        await beforeCommit?.();
        await transcript.commit([steer]);
        return [steer];
      },
    };
    // The message arrives while the tool runs: the drain before the next call must wait for the turn.
    const lookup = countingTool("lookup", { behaviour: () => ((waiting = true), "weekday data") });
    const { p, provider } = params([{ calls: [{ id: "c1", name: "lookup" }] }, { text: "Checked both." }], { commitTurn, steering, tools: toolMap(lookup) }, transcript);
    const attempt = runAttempt(p);
    await until(() => held.length === 1 && !waiting);
    for (let i = 0; i < 20; i += 1) await new Promise<void>((resolve) => setImmediate(resolve));
    expect(transcript.roles()).toEqual(["user"]);
    expect(provider.requests).toHaveLength(1);
    held[0].land();
    const result = await attempt;
    expect(result.outcome).toEqual({ kind: "completed" });
    expect(transcript.roles()).toEqual(["user", "assistant", "tool_result", "user", "assistant"]);
    expect(provider.requests[1].messages.at(-1)).toEqual(steer);
  });
});
