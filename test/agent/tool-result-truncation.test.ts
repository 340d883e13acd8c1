import { describe, expect, it } from "vitest";
import { OMITTED_MIDDLE_MARKER, tailLooksImportant, truncateToolResult } from "../../shared/core/tool-result-truncation";

const lines = (n: number, prefix = "line") => Array.from({ length: n }, (_, i) => `${prefix} ${String(i).padStart(5, "0")}`).join("\n");

describe("truncateToolResult", () => {
  it("leaves results within the cap alone", () => {
    expect(truncateToolResult("short", 2000)).toEqual({ text: "short", truncated: false, removedChars: 0 });
  });

  it("keeps the head only when the tail looks unimportant, ending on a line break, within the budget", () => {
    const input = lines(2000);
    const out = truncateToolResult(input, 5000);
    expect(out.truncated).toBe(true);
    expect(out.text.length).toBeLessThanOrEqual(5000);
    expect(out.text.startsWith("line 00000\nline 00001")).toBe(true);
    expect(out.text).not.toContain(OMITTED_MIDDLE_MARKER.trim());
    expect(out.text).toMatch(/line \d{5}\n\n\[… \d+ more characters truncated\]$/);
    expect(out.removedChars).toBe(input.length - out.text.indexOf("\n\n[…"));
  });

  it("keeps head and tail (tail <= 30% and <= 4000) when the end carries an error", () => {
    const input = `${lines(3000)}\nTraceback (most recent call last):\nValueError: bad input`;
    const out = truncateToolResult(input, 20_000);
    expect(out.text.length).toBeLessThanOrEqual(20_000);
    expect(out.text).toContain(OMITTED_MIDDLE_MARKER.trim());
    expect(out.text).toContain("ValueError: bad input");
    const tail = out.text.slice(out.text.indexOf(OMITTED_MIDDLE_MARKER) + OMITTED_MIDDLE_MARKER.length, out.text.lastIndexOf("\n\n[…"));
    expect(tail.length).toBeLessThanOrEqual(4000);
    expect(tail.startsWith("line ")).toBe(true); // snapped to a line start
  });

  it("treats a closing JSON bracket or a summary line as an important tail", () => {
    expect(tailLooksImportant('{"items": [1, 2, 3]}')).toBe(true);
    expect(tailLooksImportant("... Summary: 3 passed")).toBe(true);
    expect(tailLooksImportant("just more lines\nof text")).toBe(false);
  });

  it("never keeps fewer than 2000 characters, whatever the cap", () => {
    const out = truncateToolResult("z".repeat(10_000), 100);
    expect(out.text.length).toBeLessThanOrEqual(2000);
    expect(out.text.length).toBeGreaterThan(1900);
  });
});
