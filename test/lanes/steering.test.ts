import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAttempt, SKIPPED_FOR_STEERING, type AttemptSteering } from "../../shared/agent/attempt";
import { markMerged } from "../../shared/aws/lane-runs";
import { getRun } from "../../shared/aws/runs";
import { appendTurn, claimWriter, readTranscript, type WriterClaim } from "../../shared/aws/transcript";
import type { Message, UserMessage } from "../../shared/core/messages";
import { checkTurn } from "../../shared/core/transcript";
import { createSteeringPort } from "../../shared/lanes/steering";
import { countingTool, RecordingSink, ScriptedProvider, toolMap } from "../agent/helpers";
import { LaneHarness } from "./harness";
import { Tables, testConfig } from "./support";

let tables: Tables;
beforeAll(async () => {
  tables = await Tables.start();
});
afterAll(async () => tables?.close());

/** Steering as code: messages appear when the test says so. */
class ScriptedSteering implements AttemptSteering {
  readonly waiting: UserMessage[] = [];
  readonly drained: UserMessage[] = [];
  constructor(private readonly committed: Message[]) {}
  async pending() {
    return this.waiting.length > 0;
  }
  async drain() {
    const taken = this.waiting.splice(0);
    for (const message of taken) this.committed.push(message);
    this.drained.push(...taken);
    return taken;
  }
}

describe("the attempt's steering seam", () => {
  it("skips tool calls not yet started when a message waits, then gives the model that message", async () => {
    // Prepare: the model asks for two tools; a user message arrives while it streams.
    const committed: Message[] = [{ role: "user", content: "look both up" }];
    const steering = new ScriptedSteering(committed);
    const lookup = countingTool("lookup");
    const provider = new ScriptedProvider([
      { calls: [{ name: "lookup", args: { q: 1 } }, { name: "lookup", args: { q: 2 } }] },
      { text: "Sure, only the second question then." },
    ]);
    const sink = new RecordingSink();
    const realStream = provider.stream.bind(provider);
    provider.stream = (request) => {
      if (provider.requests.length === 0) steering.waiting.push({ role: "user", content: "actually, just the second" });
      return realStream(request);
    };
    // Act
    const report = await runAttempt({
      provider,
      model: "m",
      system: "sys",
      history: [...committed],
      tools: toolMap(lookup),
      commitTurn: async (turn) => {
        const violations = checkTurn(committed[committed.length - 1], turn);
        if (violations.length > 0) throw new Error(violations.join(","));
        committed.push(...turn);
      },
      sink,
      toolContext: { runId: "r", sessionKey: "s", signal: new AbortController().signal },
      maxToolRounds: 4,
      maxToolResultChars: 10_000,
      shouldYield: () => false,
      steering,
    });
    // Assess
    expect(report.outcome.kind).toBe("completed");
    expect(lookup.calls).toEqual([]);
    expect(committed.map((m) => m.role)).toEqual(["user", "assistant", "tool_result", "tool_result", "user", "assistant"]);
    expect(committed.filter((m) => m.role === "tool_result").map((m) => (m as { content: string }).content)).toEqual([SKIPPED_FOR_STEERING, SKIPPED_FOR_STEERING]);
    expect(sink.types().filter((t) => t.startsWith("tool"))).toEqual(["tool_start", "tool_result", "tool_start", "tool_result"]);
    const secondRequest = provider.requests[1].messages;
    expect(secondRequest[secondRequest.length - 1]).toEqual({ role: "user", content: "actually, just the second" });
  });

  it("lets a running tool finish and skips only the ones after it", async () => {
    const committed: Message[] = [{ role: "user", content: "go" }];
    const steering = new ScriptedSteering(committed);
    const slow = countingTool("slow", {
      behaviour: () => {
        steering.waiting.push({ role: "user", content: "stop after this one" });
        return "done";
      },
    });
    const provider = new ScriptedProvider([{ calls: [{ name: "slow" }, { name: "slow" }] }, { text: "ok" }]);
    await runAttempt({
      provider, model: "m", system: "s", history: [...committed], tools: toolMap(slow),
      commitTurn: async (turn) => void committed.push(...turn), sink: new RecordingSink(),
      toolContext: { runId: "r", sessionKey: "s", signal: new AbortController().signal },
      maxToolRounds: 4, maxToolResultChars: 10_000, shouldYield: () => false, steering,
    });
    expect(slow.calls).toHaveLength(1);
    expect(committed.filter((m) => m.role === "tool_result").map((m) => (m as { content: string }).content)).toEqual(["done", SKIPPED_FOR_STEERING]);
  });
});

/** A running run with a writer claim on its session's transcript, as the attempt holds it. */
async function runningAttempt() {
  const h = new LaneHarness(await tables.fresh(), testConfig({ globalCap: 0 }));
  const first = await h.accept("s", "original question");
  await h.dispatch();
  await h.start(first.runId);
  const run = (await getRun(h.db, first.runId))!;
  let claim: WriterClaim = await claimWriter(h.db, run.sessionId, run.runId, { leaseMs: 60_000, acquireTimeoutMs: 1000 });
  claim = await appendTurn(h.db, claim, [{ role: "user", content: run.message }]);
  const commits: UserMessage[] = [];
  const transcript = {
    tail: () => ({ lastMessage: claim.lastMessage, lastRunId: claim.lastRunId, nextSeq: claim.nextSeq }),
    commit: async (message: UserMessage) => {
      commits.push(message);
      claim = await appendTurn(h.db, claim, [message]);
    },
  };
  const port = createSteeringPort(h.db, run.runId, run.sessionKey, transcript);
  const history = async () => (await readTranscript(h.db, run.sessionId)).map((e) => e.message);
  return { h, run, port, transcript, commits, history };
}

describe("steering across processes (DynamoDB)", () => {
  it("the running run takes the waiting messages in order, commits each once, and remembers them", async () => {
    const { h, run, port, history } = await runningAttempt();
    const m1 = await h.accept("s", "one more thing");
    const m2 = await h.accept("s", "and another");
    expect(await port.pending()).toBe(true);
    const drained = await port.drain();
    expect(drained.map((m) => m.content)).toEqual(["one more thing", "and another"]);
    expect((await history()).map((m) => (m as UserMessage).content)).toEqual(["original question", "one more thing", "and another"]);
    expect(await port.pending()).toBe(false);
    expect(await port.drain()).toEqual([]);
    expect((await h.lane("s")).waiting).toEqual([]);
    for (const m of [m1, m2]) expect(await getRun(h.db, m.runId)).toMatchObject({ status: "steered", mergedInto: run.runId, userEntrySeq: expect.any(Number) });
    expect((await getRun(h.db, run.runId))?.steeredIds).toEqual([m1.runId, m2.runId]);
  });

  it("a crash between the commit and its bookkeeping is finished without a second copy", async () => {
    const { h, run, port, transcript, history } = await runningAttempt();
    const m = await h.accept("s", "yes");
    // The first drain died right after committing: marked, committed, not recorded.
    await markMerged(h.db, m.runId, run.runId, "steered");
    await transcript.commit({ role: "user", content: "yes" });
    expect(await port.drain()).toEqual([]);
    expect((await history()).map((e) => (e as UserMessage).content)).toEqual(["original question", "yes"]);
    expect((await getRun(h.db, m.runId))?.userEntrySeq).toBe(1);
  });

  it("two messages with the same text are two messages", async () => {
    const { h, port, history } = await runningAttempt();
    await h.accept("s", "yes");
    await h.accept("s", "yes");
    expect((await port.drain()).map((m) => m.content)).toEqual(["yes", "yes"]);
    expect((await history()).map((e) => (e as UserMessage).content)).toEqual(["original question", "yes", "yes"]);
  });

  it("a message the run claimed but never delivered runs on its own when the run ends", async () => {
    const { h, run } = await runningAttempt();
    const m = await h.accept("s", "claimed, then the attempt died");
    await markMerged(h.db, m.runId, run.runId, "steered");
    await h.dispatch();
    await h.finish(run.runId);
    expect(await getRun(h.db, m.runId)).toMatchObject({ status: "queued" });
    expect(h.executions.created).toEqual([run.runId, m.runId]);
  });

  it("delivered messages end with the run that took them, with its answer", async () => {
    const { h, run, port } = await runningAttempt();
    const m = await h.accept("s", "steer me");
    await port.drain();
    await h.finish(run.runId, "ok");
    expect(await getRun(h.db, m.runId)).toMatchObject({ status: "ok", mergedInto: run.runId });
    expect(h.executions.created).toEqual([run.runId]);
  });

  it("a prefetched drain takes what waited at the prefetch; a message after it waits for the next drain, which reads afresh", async () => {
    const { h, port, history } = await runningAttempt();
    await h.accept("s", "before the commit");
    port.prefetch!();
    // Arrives while the turn commits, after the lane was read.
    await h.accept("s", "during the commit");
    expect((await port.drain()).map((m) => m.content)).toEqual(["before the commit"]);
    // The prefetch is used once: the next drain reads the lane again and finds the later message.
    expect((await port.drain()).map((m) => m.content)).toEqual(["during the commit"]);
    expect((await history()).map((m) => (m as UserMessage).content)).toEqual(["original question", "before the commit", "during the commit"]);
    expect((await h.lane("s")).waiting).toEqual([]);
  });

  it("a drain waits for the turn still being written before it takes or commits anything, and only when a message waits", async () => {
    const { h, run, port, commits } = await runningAttempt();
    const seen: string[] = [];
    let waitingId: string | undefined;
    const turnWritten = async () => void seen.push(`${commits.length} commits, message ${(await getRun(h.db, waitingId!))?.status}`);
    // Nothing waits: the turn is not waited for (the next model call goes out beside its commit).
    expect(await port.drain(turnWritten)).toEqual([]);
    expect(seen).toEqual([]);
    waitingId = (await h.accept("s", "one more thing")).runId;
    expect((await port.drain(turnWritten)).map((m) => m.content)).toEqual(["one more thing"]);
    // Waited for before the message was marked steered and before it was committed.
    expect(seen).toEqual(["0 commits, message queued"]);
    expect(await getRun(h.db, waitingId)).toMatchObject({ status: "steered", mergedInto: run.runId });
  });

  it("a run that does not own the lane takes nothing", async () => {
    const { h, run, transcript } = await runningAttempt();
    await h.accept("s", "for the owner only");
    const stranger = createSteeringPort(h.db, "run_someone_else", run.sessionKey, transcript);
    expect(await stranger.pending()).toBe(false);
    expect(await stranger.drain()).toEqual([]);
  });
});
