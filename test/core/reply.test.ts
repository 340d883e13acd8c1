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

describe("reply shaping on a chat conversation", () => {
  const sent = ["📊 The report is ready:  revenue up 12%."];

  it("drops a final answer that repeats what the messaging tool sent (normalized, either way round)", () => {
    expect(shapeReply({ status: "ok", finalText: "the report is ready: revenue up 12%.", toolErrors: [], messagingTexts: sent })).toEqual([]);
    expect(shapeReply({ status: "ok", finalText: "Report is ready", toolErrors: [], messagingTexts: sent })).toEqual([]);
    expect(shapeReply({ status: "ok", finalText: "Anything else?", toolErrors: [], messagingTexts: sent })).toEqual([{ text: "Anything else?" }]);
    // Too short to call a duplicate.
    expect(shapeReply({ status: "ok", finalText: "Done.", toolErrors: [], messagingTexts: ["Done."] })).toEqual([{ text: "Done." }]);
  });

  it("gives no tool-error fallback when the messaging tool already sent something visible", () => {
    const toolErrors = [{ toolName: "http_fetch", message: "Error: HTTP 500\nbody" }];
    expect(shapeReply({ status: "ok", finalText: "", toolErrors, messagingTexts: sent })).toEqual([]);
    expect(shapeReply({ status: "ok", finalText: "", toolErrors, messagingTexts: ["NO_REPLY"] })).toEqual([{ text: "⚠️ http_fetch failed", isError: true }]);
  });

  it("puts the verbose tool summary first and the error detail in the fallback", () => {
    const tools = [{ name: "calculator", isError: false }, { name: "http_fetch", isError: true }];
    expect(shapeReply({ status: "ok", finalText: "42", toolErrors: [], verbose: { tools } })).toEqual([
      { text: "🛠️ calculator\n⚠️ http_fetch failed", toolSummary: true },
      { text: "42" },
    ]);
    const toolErrors = [{ toolName: "http_fetch", message: "Error: HTTP 500\nbody" }];
    expect(shapeReply({ status: "ok", finalText: "", toolErrors, verbose: { tools: [] } })).toEqual([{ text: "⚠️ http_fetch failed: HTTP 500", isError: true }]);
  });
});
