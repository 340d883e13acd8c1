import { describe, expect, it } from "vitest";
import { runAttempt, type AttemptParams } from "../../shared/agent/attempt";
import type { ApprovalGate, GateVerdict } from "../../shared/agent/tools/approval-gate";
import { createMemoryLedger } from "../../shared/agent/tool-ledger";
import type { Message } from "../../shared/core/messages";
import { countingTool, RecordingSink, ScriptedProvider, toolMap, user } from "./helpers";

/** A gate answering from a script: pause until `answer` is set. */
function scriptedGate(): ApprovalGate & { answer?: GateVerdict; asked: string[] } {
  const gate: ApprovalGate & { answer?: GateVerdict; asked: string[] } = {
    asked: [],
    async check(call) {
      gate.asked.push(call.toolCallId);
      return gate.answer ?? { kind: "pause", inputId: `apr-${call.toolCallId}`, timeoutSeconds: 300 };
    },
  };
  return gate;
}

describe("an attempt that needs an approval", () => {
  it("stops before the call (nothing committed, tool not run); the next attempt runs it from the saved turn once allowed", async () => {
    const committed: Message[] = [user("deploy")];
    const tool = countingTool("deploy", { mutating: true });
    const ledger = createMemoryLedger();
    const gate = scriptedGate();
    const base = (turns: ConstructorParameters<typeof ScriptedProvider>[0]): AttemptParams => ({
      provider: new ScriptedProvider(turns),
      model: "m",
      system: "sys",
      history: [...committed],
      tools: toolMap(tool),
      commitTurn: async (turn) => void committed.push(...turn),
      sink: new RecordingSink(),
      toolContext: { runId: "run1", sessionKey: "s", signal: new AbortController().signal },
      maxToolRounds: 8,
      maxToolResultChars: 4000,
      shouldYield: () => false,
      ledger,
      gate,
    });
    const first = await runAttempt(base([{ calls: [{ name: "deploy", id: "call_1" }] }]));
    expect(first.outcome).toEqual({ kind: "paused", inputId: "apr-call_1", timeoutSeconds: 300 });
    expect(tool.calls).toHaveLength(0);
    expect(committed.map((m) => m.role)).toEqual(["user"]);
    expect(await ledger.loadPendingTurn()).toBeDefined();

    gate.answer = { kind: "proceed" };
    const second = await runAttempt(base([{ text: "Deployed." }]));
    expect(second.outcome).toEqual({ kind: "completed" });
    expect(tool.calls).toHaveLength(1);
    expect(committed.map((m) => m.role)).toEqual(["user", "assistant", "tool_result", "assistant"]);
    expect(await ledger.loadPendingTurn()).toBeUndefined();
  });

  it("an answer that is not `proceed` becomes the call's error result without running it", async () => {
    const committed: Message[] = [user("deploy")];
    const tool = countingTool("deploy");
    const gate = scriptedGate();
    gate.answer = { kind: "answered", content: "Denied by user", isError: true };
    const result = await runAttempt({
      provider: new ScriptedProvider([{ calls: [{ name: "deploy", id: "call_2" }] }, { text: "ok" }]),
      model: "m",
      system: "sys",
      history: [...committed],
      tools: toolMap(tool),
      commitTurn: async (turn) => void committed.push(...turn),
      sink: new RecordingSink(),
      toolContext: { runId: "run1", sessionKey: "s", signal: new AbortController().signal },
      maxToolRounds: 8,
      maxToolResultChars: 4000,
      shouldYield: () => false,
      gate,
    });
    expect(result.outcome).toEqual({ kind: "completed" });
    expect(tool.calls).toHaveLength(0);
    expect(committed.find((m) => m.role === "tool_result")).toMatchObject({ content: "Denied by user", isError: true });
  });

  it("a non-mutating call that ran earlier in the paused turn is replayed from the ledger, not run again", async () => {
    const committed: Message[] = [user("look, then deploy")];
    const lookup = countingTool("lookup");
    const deploy = countingTool("deploy", { mutating: true });
    const ledger = createMemoryLedger();
    const gate: ApprovalGate & { answer?: GateVerdict } = {
      async check(call) {
        if (call.toolName !== "deploy") return { kind: "proceed" };
        return gate.answer ?? { kind: "pause", inputId: `apr-${call.toolCallId}`, timeoutSeconds: 300 };
      },
    };
    const base = (turns: ConstructorParameters<typeof ScriptedProvider>[0]): AttemptParams => ({
      provider: new ScriptedProvider(turns),
      model: "m",
      system: "sys",
      history: [...committed],
      tools: toolMap(lookup, deploy),
      commitTurn: async (turn) => void committed.push(...turn),
      sink: new RecordingSink(),
      toolContext: { runId: "run1", sessionKey: "s", signal: new AbortController().signal },
      maxToolRounds: 8,
      maxToolResultChars: 4000,
      shouldYield: () => false,
      ledger,
      gate,
    });
    const first = await runAttempt(base([{ calls: [{ name: "lookup", id: "call_look" }, { name: "deploy", id: "call_deploy" }] }]));
    expect(first.outcome).toMatchObject({ kind: "paused" });
    expect(lookup.calls).toHaveLength(1);

    gate.answer = { kind: "proceed" };
    const second = await runAttempt(base([{ text: "Done." }]));
    expect(second.outcome).toEqual({ kind: "completed" });
    expect(lookup.calls).toHaveLength(1);
    expect(deploy.calls).toHaveLength(1);
    const results = committed.filter((m) => m.role === "tool_result");
    expect(results.map((m) => (m as { toolCallId: string }).toolCallId)).toEqual(["call_look", "call_deploy"]);
  });

  it("a client's answer is recorded as the call's result (completed), the tool's own code never runs", async () => {
    const committed: Message[] = [user("where am I")];
    const tool = { ...countingTool("where_am_i"), client: true };
    const sink = new RecordingSink();
    const gate: ApprovalGate = { check: async () => ({ kind: "answered", content: "Berlin", isError: false, status: "completed" }) };
    const report = await runAttempt({
      provider: new ScriptedProvider([{ calls: [{ name: "where_am_i", id: "call_c" }] }, { text: "You are in Berlin." }]),
      model: "m",
      system: "sys",
      history: [...committed],
      tools: toolMap(tool),
      commitTurn: async (turn) => void committed.push(...turn),
      sink,
      toolContext: { runId: "run1", sessionKey: "s", signal: new AbortController().signal },
      maxToolRounds: 8,
      maxToolResultChars: 4000,
      shouldYield: () => false,
      gate,
    });
    expect(report.outcome).toEqual({ kind: "completed" });
    expect(tool.calls).toHaveLength(0);
    expect(committed.find((m) => m.role === "tool_result")).toMatchObject({ content: "Berlin", isError: false });
  });
});
