import { describe, expect, it } from "vitest";
import { isSilentReply, shapeReply } from "../../shared/core/reply";
import { capText } from "../../shared/core/truncate";

describe("reply shaping", () => {
  it("drops the exact silent token only", () => {
    expect(isSilentReply("NO_REPLY")).toBe(true);
    expect(isSilentReply("  no_reply \n")).toBe(true);
    expect(isSilentReply("done. NO_REPLY")).toBe(false);
    expect(shapeReply({ status: "ok", finalText: " NO_REPLY ", toolErrors: [] })).toEqual([]);
    expect(shapeReply({ status: "ok", finalText: "All set. NO_REPLY", toolErrors: [] })).toEqual([{ text: "All set. NO_REPLY" }]);
  });

  it("adds the error text on failure and a tool-error fallback when nothing else renders", () => {
    expect(shapeReply({ status: "error", finalText: "", error: "LLM request failed.", toolErrors: [] })).toEqual([
      { text: "LLM request failed.", isError: true },
    ]);
    expect(shapeReply({ status: "ok", finalText: "", toolErrors: [{ toolName: "exec", message: "boom" }] })).toEqual([
      { text: "⚠️ exec failed", isError: true },
    ]);
    expect(shapeReply({ status: "ok", finalText: "fine", toolErrors: [{ toolName: "exec", message: "boom" }] })).toEqual([{ text: "fine" }]);
  });

  it("caps text keeping head and tail", () => {
    const text = `${"a".repeat(5000)}${"z".repeat(5000)}`;
    const capped = capText(text, 2000);
    expect(capped.truncated).toBe(true);
    expect(capped.text.length).toBeLessThanOrEqual(2000);
    expect(capped.text.startsWith("aaa")).toBe(true);
    expect(capped.text.endsWith("zzz")).toBe(true);
    expect(capped.text).toMatch(/characters truncated/);
    expect(capText("short", 2000)).toEqual({ text: "short", truncated: false });
  });
});
