import { describe, expect, it } from "vitest";
import { limitHistoryTurns } from "../../shared/agent/history/limit-turns";
import { HISTORY_STEPS, prepareHistory } from "../../shared/agent/history/pipeline";
import { repairToolUseResultPairing, RESPONSES_MISSING_RESULT } from "../../shared/agent/history/repair-pairing";
import { sanitizeHistory } from "../../shared/agent/history/sanitize";
import { validateProviderTurns } from "../../shared/agent/history/validate-turns";
import { passthroughContextEngine, type ContextEngine } from "../../shared/agent/history/context-engine";
import type { Message } from "../../shared/core/messages";
import { MISSING_TOOL_RESULT } from "../../shared/providers/transform-messages";
import { assistant, call, result, text, user } from "./helpers";

const options = { api: "openai-chat" as const, historyTurnLimit: 0, engine: passthroughContextEngine, tokenBudget: 100_000, availableTools: [] };
const roles = (messages: Message[]) => messages.map((m) => (m.role === "tool_result" ? `result:${m.toolCallId}` : m.role));

describe("history chain order", () => {
  it("runs sanitize -> validate turns -> limit turns -> repair pairing -> assemble, in that order", async () => {
    const prepared = await prepareHistory([user("a")], options);
    expect(prepared.trace.map((t) => t.step)).toEqual([...HISTORY_STEPS]);
    expect(HISTORY_STEPS).toEqual(["sanitize", "validate_turns", "limit_turns", "repair_pairing", "assemble"]);
  });

  it("repairs after limiting: a result whose call was cut off with its turn is dropped", async () => {
    const transcript: Message[] = [
      user("first"),
      assistant([call("c1", "t")], { stopReason: "tool_calls" }),
      // A compaction (or an import) left this result after the next user message.
      user("second"),
      result("c1"),
      assistant([text("answer")]),
      user("third"),
    ];
    const prepared = await prepareHistory(transcript, { ...options, historyTurnLimit: 2 });
    expect(roles(prepared.messages)).toEqual(["user", "assistant", "user"]);
    expect(prepared.repairs.droppedResults).toBe(1);
  });
});

describe("sanitize", () => {
  it("drops empty text, empty user messages, nameless tool calls and content-less turns; trims tool names", () => {
    const out = sanitizeHistory([
      user("  "),
      user("hi"),
      assistant([text(""), { type: "thinking", text: "" }, call("c1", "  ")]),
      assistant([text("ok"), call("c2", " read ")], { stopReason: "tool_calls" }),
      result("c2", "done", " read "),
    ]);
    expect(out).toEqual([
      user("hi"),
      assistant([text("ok"), call("c2", "read")], { stopReason: "tool_calls" }),
      result("c2", "done", "read"),
    ]);
  });

  it("keeps signed thinking even without text (it must be replayed to Anthropic)", () => {
    const signed = assistant([{ type: "thinking", text: "", signature: "sig" }, text("a")]);
    expect(sanitizeHistory([signed])).toEqual([signed]);
  });
});

describe("validate provider turns", () => {
  it("drops leading tool results for every provider", () => {
    expect(roles(validateProviderTurns([result("x"), user("q")], "openai-chat"))).toEqual(["user"]);
  });

  it("merges consecutive user messages and tool-free assistant messages for Anthropic only", () => {
    const history = [user("a"), user("b"), assistant([text("x")]), assistant([text("y")])];
    expect(validateProviderTurns(history, "anthropic-messages")).toEqual([user("a\n\nb"), assistant([text("x"), text("y")])]);
    expect(validateProviderTurns(history, "openai-chat")).toHaveLength(4);
  });

  it("strict (the loop's role-ordering repair): the same alternation for every provider, starting with a user turn", () => {
    const history = [assistant([text("hello")]), user("a"), user("b"), assistant([text("x")]), assistant([text("y")])];
    expect(validateProviderTurns(history, "openai-chat", { strict: true })).toEqual([user("a\n\nb"), assistant([text("x"), text("y")])]);
  });
});

describe("limit history turns", () => {
  it("keeps the last N user turns with everything after them; 0 keeps all", () => {
    const history = [user("1"), assistant([text("a")]), user("2"), assistant([text("b")]), user("3")];
    expect(limitHistoryTurns(history, 2)).toEqual(history.slice(2));
    expect(limitHistoryTurns(history, 0)).toEqual(history);
    expect(limitHistoryTurns(history, 5)).toEqual(history);
  });
});

describe("repair tool_use / tool_result pairing", () => {
  const drop = { erroredAssistantResultPolicy: "drop" as const };

  it("synthesizes a missing result, drops orphans and duplicates, moves a displaced result up", () => {
    const repaired = repairToolUseResultPairing(
      [
        user("q"),
        assistant([call("a", "t"), call("b", "t")], { stopReason: "tool_calls" }),
        result("b"),
        user("interjection"),
        result("a", "late"),
        result("b", "duplicate"),
        result("ghost"),
      ],
      drop,
    );
    expect(roles(repaired.messages)).toEqual(["user", "assistant", "result:a", "result:b", "user"]);
    expect(repaired.messages[2]).toMatchObject({ content: "late" });
    expect(repaired.messages[3]).toMatchObject({ content: "ok" });
    expect(repaired).toMatchObject({ synthesizedResults: 0, droppedResults: 2 });
    const missing = repairToolUseResultPairing([user("q"), assistant([call("a", "t")], { stopReason: "tool_calls" })], drop);
    expect(missing.messages[2]).toMatchObject({ role: "tool_result", toolCallId: "a", isError: true, content: MISSING_TOOL_RESULT });
  });

  it("drops the tool calls and the results of an assistant turn that ended in an error", () => {
    const repaired = repairToolUseResultPairing(
      [user("q"), assistant([text("partial"), call("a", "t")], { stopReason: "error" }), result("a"), assistant([call("b", "t")], { stopReason: "aborted" }), result("b")],
      drop,
    );
    expect(repaired.messages).toEqual([user("q"), assistant([text("partial")], { stopReason: "error" })]);
    expect(repaired).toMatchObject({ droppedCalls: 2, droppedResults: 2 });
  });

  it("fills a missing result with `aborted` for the OpenAI Responses API", async () => {
    const transcript = [user("q"), assistant([call("a", "t")], { stopReason: "tool_calls" })];
    const prepared = await prepareHistory(transcript, { ...options, api: "openai-responses" });
    expect(prepared.messages[2]).toMatchObject({ toolCallId: "a", content: RESPONSES_MISSING_RESULT, isError: true });
    expect(RESPONSES_MISSING_RESULT).toBe("aborted");
  });
});

describe("context assembly", () => {
  it("uses the engine's messages and system addition", async () => {
    const engine: ContextEngine = { id: "memory", assemble: async (input) => ({ messages: input.messages.slice(-1), systemPromptAddition: "Remember: X." }) };
    const prepared = await prepareHistory([user("old"), assistant([text("a")]), user("new")], { ...options, engine });
    expect(prepared.messages).toEqual([user("new")]);
    expect(prepared.systemPromptAddition).toBe("Remember: X.");
  });

  it("falls back to the pipeline's messages when the engine throws or returns nothing", async () => {
    const throwing: ContextEngine = { id: "broken", assemble: async () => Promise.reject(new Error("db down")) };
    const empty: ContextEngine = { id: "empty", assemble: async () => ({ messages: [] }) };
    for (const engine of [throwing, empty]) {
      const prepared = await prepareHistory([user("q")], { ...options, engine });
      expect(prepared.messages).toEqual([user("q")]);
      expect(prepared.engineFailure).toContain(engine.id);
    }
  });
});
