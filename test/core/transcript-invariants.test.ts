import { describe, expect, it } from "vitest";
import { checkTurn } from "../../shared/core/transcript";
import type { AssistantMessage, Message, ToolResultMessage } from "../../shared/core/messages";

const usage = { input: 1, output: 1, cacheRead: 0, cacheWrite: 0 };
const assistant = (...toolIds: string[]): AssistantMessage => ({
  role: "assistant",
  content: toolIds.length ? toolIds.map((id) => ({ type: "tool_call" as const, id, name: "calculator", args: {} })) : [{ type: "text", text: "hi" }],
  provider: "offline",
  model: "echo",
  stopReason: toolIds.length ? "tool_calls" : "stop",
  usage,
});
const result = (id: string): ToolResultMessage => ({ role: "tool_result", toolCallId: id, toolName: "calculator", content: "1", isError: false });
const user: Message = { role: "user", content: "hello" };

describe("transcript invariants at commit time", () => {
  it("accepts the normal shapes", () => {
    expect(checkTurn(undefined, [user])).toEqual([]);
    expect(checkTurn(user, [assistant()])).toEqual([]);
    expect(checkTurn(user, [assistant("a", "b"), result("a"), result("b")])).toEqual([]);
    expect(checkTurn(result("b"), [assistant()])).toEqual([]);
    expect(checkTurn(assistant(), [user])).toEqual([]);
    // A failed run leaves its user message; the next one may follow it.
    expect(checkTurn(user, [user])).toEqual([]);
  });

  it("rejects unanswered, orphan and duplicate tool results", () => {
    expect(checkTurn(user, [assistant("a", "b"), result("a")])).toContain("unanswered_tool_call");
    expect(checkTurn(user, [assistant("a"), result("a"), result("z")])).toContain("orphan_tool_result");
    expect(checkTurn(user, [assistant("a"), result("a"), result("a")])).toContain("duplicate_tool_result");
    expect(checkTurn(user, [result("a")])).toEqual(["orphan_tool_result"]);
  });

  it("rejects broken role order", () => {
    expect(checkTurn(assistant(), [assistant()])).toContain("assistant_after_assistant");
    expect(checkTurn(assistant("a"), [user])).toContain("user_after_pending_tool_calls");
    expect(checkTurn(undefined, [])).toEqual(["empty_turn"]);
    expect(checkTurn(undefined, [user, assistant()])).toContain("assistant_turn_has_extra_messages");
  });
});
