import { describe, expect, it } from "vitest";
import { repairToolUseResultPairing } from "../../shared/core/tool-pairing";
import type { AssistantBlock, AssistantMessage, Message } from "../../shared/core/messages";
import {
  ANTHROPIC_TOOL_ID,
  createToolIdMapper,
  LEADING_USER_PLACEHOLDER,
  MISSING_TOOL_RESULT,
  normalizeToolCallId,
  OPENAI_CHAT_TOOL_ID,
  repairToolPairing,
  toAnthropicRequest,
  toOpenAIChatMessages,
  toOpenAIResponsesInput,
} from "../../shared/providers/transform-messages";

const ANTHROPIC_ID = /^[a-zA-Z0-9_-]{1,64}$/;

function assistant(provider: string, content: AssistantBlock[]): AssistantMessage {
  const stopReason = content.some((b) => b.type === "tool_call") ? "tool_calls" : "stop";
  return { role: "assistant", content, provider, model: "m", stopReason, usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0 } };
}

function result(toolCallId: string, content: string, isError = false): Message {
  return { role: "tool_result", toolCallId, toolName: "read_file", content, isError };
}

describe("tool call ids", () => {
  it("leaves ids that every provider accepts untouched", () => {
    // Act / Assess
    expect(normalizeToolCallId("call_DdmO9pD3xa9XTPNJ32zg2hcA", OPENAI_CHAT_TOOL_ID)).toBe("call_DdmO9pD3xa9XTPNJ32zg2hcA");
    expect(normalizeToolCallId("toolu_01T1x1fJ34qAmk2tNTrN7Up6", ANTHROPIC_TOOL_ID)).toBe("toolu_01T1x1fJ34qAmk2tNTrN7Up6");
  });

  it("rewrites ids with characters Anthropic rejects, keeping distinct ids distinct", () => {
    // Prepare: Kimi K2 served by vLLM names calls like this.
    const first = "functions.read_file:0";
    const second = "functions.read_file:1";

    // Act
    const a = normalizeToolCallId(first, ANTHROPIC_TOOL_ID);
    const b = normalizeToolCallId(second, ANTHROPIC_TOOL_ID);

    // Assess
    expect(a).toMatch(ANTHROPIC_ID);
    expect(b).toMatch(ANTHROPIC_ID);
    expect(a).not.toBe(b);
    expect(normalizeToolCallId(first, ANTHROPIC_TOOL_ID)).toBe(a); // deterministic
  });

  it("shortens ids over OpenAI chat's 40 characters and Anthropic's 64", () => {
    // Prepare
    const long = `call_${"x".repeat(90)}`;

    // Act
    const forChat = normalizeToolCallId(long, OPENAI_CHAT_TOOL_ID);
    const forAnthropic = normalizeToolCallId(long, ANTHROPIC_TOOL_ID);

    // Assess
    expect(forChat.length).toBeLessThanOrEqual(40);
    expect(forAnthropic.length).toBeLessThanOrEqual(64);
    expect(forAnthropic).toMatch(ANTHROPIC_ID);
  });

  it("gives an empty id a valid one", () => {
    expect(normalizeToolCallId("", ANTHROPIC_TOOL_ID)).toMatch(ANTHROPIC_ID);
  });

  it("never maps two different ids to the same id within one conversation", () => {
    // Prepare
    const mapId = createToolIdMapper(ANTHROPIC_TOOL_ID);

    // Act: "a_b" is valid as is; "a.b" would naively become "a_b" too.
    const valid = mapId("a_b");
    const rewritten = mapId("a.b");

    // Assess
    expect(valid).toBe("a_b");
    expect(rewritten).not.toBe(valid);
    expect(mapId("a.b")).toBe(rewritten);
  });
});

describe("repairToolPairing", () => {
  it("answers a call that has no recorded result with a synthetic error result", () => {
    // Prepare
    const history: Message[] = [
      { role: "user", content: "go" },
      assistant("openai", [{ type: "tool_call", id: "c1", name: "read_file", args: {} }]),
      { role: "user", content: "are you there?" },
    ];

    // Act
    const repaired = repairToolPairing(history);

    // Assess
    expect(repaired[2]).toEqual({ role: "tool_result", toolCallId: "c1", toolName: "read_file", content: MISSING_TOOL_RESULT, isError: true });
    expect(repaired[3]).toEqual({ role: "user", content: "are you there?" });
  });

  it("drops results whose call is not in the preceding assistant turn, and duplicates", () => {
    // Prepare
    const history: Message[] = [
      { role: "user", content: "go" },
      result("ghost", "orphan"),
      assistant("openai", [{ type: "tool_call", id: "c1", name: "read_file", args: {} }]),
      result("c1", "first"),
      result("c1", "duplicate"),
    ];

    // Act
    const repaired = repairToolPairing(history);

    // Assess
    expect(repaired.filter((m) => m.role === "tool_result")).toEqual([result("c1", "first")]);
  });
});

describe("one pairing repair for history and providers", () => {
  it("the provider conversion and the history chain repair a history the same way (a late result moves up to its call)", () => {
    const history: Message[] = [
      { role: "user", content: "go" },
      assistant("openai", [{ type: "tool_call", id: "c1", name: "read_file", args: {} }]),
      { role: "user", content: "still there?" },
      result("c1", "late"),
      result("ghost", "orphan"),
    ];
    const fromHistory = repairToolUseResultPairing(history, { erroredAssistantResultPolicy: "keep" }).messages;
    expect(repairToolPairing(history)).toEqual(fromHistory);
    expect(fromHistory.map((m) => m.role)).toEqual(["user", "assistant", "tool_result", "user"]);
    expect(fromHistory[2]).toEqual(result("c1", "late"));
  });
});

describe("to OpenAI Chat", () => {
  it("puts the system prompt first, drops thinking, and keeps call and result ids paired", () => {
    // Prepare
    const longId = `toolu_${"Z".repeat(50)}`;
    const history: Message[] = [
      { role: "user", content: "Read a" },
      assistant("anthropic", [
        { type: "thinking", text: "I should read it.", signature: "EqQBsig" },
        { type: "text", text: "Reading." },
        { type: "tool_call", id: longId, name: "read_file", args: { path: "a" } },
      ]),
      result(longId, "A!", true),
      assistant("anthropic", [{ type: "thinking", text: "only thoughts", signature: "sig" }]),
    ];

    // Act
    const out = toOpenAIChatMessages("Be brief.", history);

    // Assess
    expect(out).toHaveLength(4); // the thinking-only turn is dropped
    expect(out[0]).toEqual({ role: "system", content: "Be brief." });
    const call = out[2] as { role: string; content: string; tool_calls: Array<{ id: string; function: { arguments: string } }> };
    expect(call.content).toBe("Reading.");
    expect(call.tool_calls[0].id.length).toBeLessThanOrEqual(40);
    expect(call.tool_calls[0].function.arguments).toBe('{"path":"a"}');
    expect(out[3]).toEqual({ role: "tool", tool_call_id: call.tool_calls[0].id, content: "A!" });
  });

  it("uses null content for a tool-call-only assistant turn", () => {
    // Prepare
    const history: Message[] = [
      { role: "user", content: "x" },
      assistant("openai", [{ type: "tool_call", id: "c1", name: "read_file", args: {} }]),
      result("c1", "ok"),
    ];

    // Act
    const out = toOpenAIChatMessages("", history);

    // Assess
    expect(out[1]).toMatchObject({ role: "assistant", content: null });
    expect(out[0]).toEqual({ role: "user", content: "x" });
  });
});

describe("to OpenAI Responses", () => {
  it("emits message, function_call and function_call_output items; thinking is dropped", () => {
    // Prepare
    const history: Message[] = [
      { role: "user", content: "Read a" },
      assistant("openai-responses", [
        { type: "thinking", text: "plan" },
        { type: "text", text: "On it." },
        { type: "tool_call", id: "functions.read:0", name: "read_file", args: { path: "a" } },
      ]),
      result("functions.read:0", "A!"),
    ];

    // Act
    const out = toOpenAIResponsesInput(history);

    // Assess
    const callId = (out[2] as { call_id: string }).call_id;
    expect(callId).toMatch(ANTHROPIC_ID);
    expect(out).toEqual([
      { role: "user", content: "Read a" },
      { role: "assistant", content: "On it." },
      { type: "function_call", call_id: callId, name: "read_file", arguments: '{"path":"a"}' },
      { type: "function_call_output", call_id: callId, output: "A!" },
    ]);
  });
});

describe("to Anthropic", () => {
  it("fails over an OpenAI history: ids repaired and paired, reasoning dropped, results in one user turn", () => {
    // Prepare: a vLLM-served model produced reasoning (no signature) and two parallel calls.
    const history: Message[] = [
      { role: "user", content: "Compare a and b" },
      assistant("openai", [
        { type: "thinking", text: "Need both files." },
        { type: "text", text: "Reading both." },
        { type: "tool_call", id: "functions.read_file:0", name: "read_file", args: { path: "a" } },
        { type: "tool_call", id: "functions.read_file:1", name: "read_file", args: { path: "b" } },
      ]),
      result("functions.read_file:0", "A"),
      result("functions.read_file:1", "no such file", true),
      { role: "user", content: "Also check c" },
    ];

    // Act
    const { system, messages } = toAnthropicRequest("Be brief.", history);

    // Assess
    expect(system).toBe("Be brief.");
    expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    const assistantBlocks = messages[1].content as Array<{ type: string; id?: string }>;
    expect(assistantBlocks.map((b) => b.type)).toEqual(["text", "tool_use", "tool_use"]);
    const [idA, idB] = assistantBlocks.filter((b) => b.type === "tool_use").map((b) => b.id!);
    expect(idA).toMatch(ANTHROPIC_ID);
    expect(idB).toMatch(ANTHROPIC_ID);
    expect(messages[2].content).toEqual([
      { type: "tool_result", tool_use_id: idA, content: "A", is_error: false },
      { type: "tool_result", tool_use_id: idB, content: "no such file", is_error: true },
      { type: "text", text: "Also check c" },
    ]);
  });

  it("replays Anthropic thinking with its signature, and drops it without one or from another provider", () => {
    // Prepare
    const history: Message[] = [
      { role: "user", content: "q1" },
      assistant("anthropic", [
        { type: "thinking", text: "signed", signature: "EqQBsig" },
        { type: "thinking", text: "unsigned" },
        { type: "text", text: "a1" },
      ]),
      { role: "user", content: "q2" },
      assistant("openai", [
        { type: "thinking", text: "foreign", signature: "not-anthropic" },
        { type: "text", text: "a2" },
      ]),
      { role: "user", content: "q3" },
    ];

    // Act
    const { messages } = toAnthropicRequest("", history);

    // Assess
    expect(messages[1].content).toEqual([
      { type: "thinking", thinking: "signed", signature: "EqQBsig" },
      { type: "text", text: "a1" },
    ]);
    expect(messages[3].content).toEqual([{ type: "text", text: "a2" }]);
  });

  it("starts with a user turn and merges consecutive same-role turns", () => {
    // Prepare: a history that starts mid-conversation (e.g. after compaction).
    const history: Message[] = [
      assistant("anthropic", [{ type: "text", text: "Earlier answer." }]),
      assistant("anthropic", [{ type: "text", text: "More." }]),
      { role: "user", content: "first" },
      { role: "user", content: "second" },
    ];

    // Act
    const { system, messages } = toAnthropicRequest("", history);

    // Assess
    expect(system).toBeUndefined();
    expect(messages).toEqual([
      { role: "user", content: [{ type: "text", text: LEADING_USER_PLACEHOLDER }] },
      { role: "assistant", content: [{ type: "text", text: "Earlier answer." }, { type: "text", text: "More." }] },
      { role: "user", content: [{ type: "text", text: "first" }, { type: "text", text: "second" }] },
    ]);
  });

  it("drops empty text and empty turns that Anthropic would reject", () => {
    // Prepare: an errored turn with no content and a whitespace-only text block.
    const failed: AssistantMessage = { ...assistant("openai", []), stopReason: "error" };
    const history: Message[] = [
      { role: "user", content: "hi" },
      failed,
      assistant("openai", [{ type: "text", text: "  " }, { type: "text", text: "hello" }]),
    ];

    // Act
    const { messages } = toAnthropicRequest("", history);

    // Assess
    expect(messages).toEqual([
      { role: "user", content: [{ type: "text", text: "hi" }] },
      { role: "assistant", content: [{ type: "text", text: "hello" }] },
    ]);
  });

  it("answers an interrupted tool call so the Anthropic request stays valid", () => {
    // Prepare
    const history: Message[] = [
      { role: "user", content: "go" },
      assistant("anthropic", [{ type: "tool_call", id: "toolu_1", name: "read_file", args: {} }]),
      { role: "user", content: "retry please" },
    ];

    // Act
    const { messages } = toAnthropicRequest("", history);

    // Assess
    expect(messages[2].content).toEqual([
      { type: "tool_result", tool_use_id: "toolu_1", content: MISSING_TOOL_RESULT, is_error: true },
      { type: "text", text: "retry please" },
    ]);
  });
});
