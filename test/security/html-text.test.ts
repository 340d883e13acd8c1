import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { htmlToText } from "../../shared/agent/tools/html-text";

/** The regex version it replaced: right on small pages, quadratic on hostile ones (kept here as the oracle). */
function regexHtmlToText(html: string): string {
  return html
    .replace(/<(script|style|noscript)[\s\S]*?<\/\1>/gi, " ")
    .replace(/<br\s*\/?>|<\/(p|div|li|h[1-6]|tr)>/gi, "\n")
    .replace(/<[^>]+>/g, " ")
    .replace(/&nbsp;/g, " ")
    .replace(/&amp;/g, "&")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/[ \t]+/g, " ")
    .replace(/ *\n */g, "\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

const MB = 1024 * 1024;

describe("htmlToText (defect 2: linear on hostile pages)", () => {
  it("reduces ordinary pages to text", () => {
    expect(htmlToText("<html><script>evil()</script><p>Hello &amp; welcome</p></html>")).toBe("Hello & welcome");
    expect(htmlToText("<h1>T</h1><p>a<br>b</p><style>x{}</style>")).toBe("T\na\nb");
    expect(htmlToText("a < b and c > d")).toBe("a d");
    expect(htmlToText("1 < 2")).toBe("1 < 2");
    expect(htmlToText("<script>never closed <p>text</p>")).toBe("never closed text");
  });

  it.each([
    ["unclosed <", "<".repeat(MB)],
    ["unclosed <a", "<a".repeat(MB / 2)],
    ["unclosed <script", "<script>".repeat(MB / 8)],
    ["tags without a close of their raw-text element", "<style><script><noscript>x".repeat(MB / 26)],
    ["spaces around no newline", " ".repeat(MB) + "x"],
    ["entity-like text", "&amp".repeat(MB / 4)],
  ])("handles 1 MB of %s in one pass (the regex version took minutes)", (_name, page) => {
    const text = htmlToText(page);
    expect(text.length).toBeLessThanOrEqual(page.length);
  }, 60_000);

  it("agrees with the regex version on generated pages of whole tags and text", () => {
    const piece = fc.constantFrom("/", "<p>", "</p>", "<br/>", "<br >", "<script>", "</script>", "<STYLE a=1>", "</style>", "<noscript>", "</noscript>", "</li>", "&amp;", "&nbsp;", "&lt;", " ", "\t", "\n", "a", "b", "<div class=x>", "</h3>", "<a href='/'>");
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 30 }), (pieces) => {
        const html = pieces.join("");
        expect(htmlToText(html)).toBe(regexHtmlToText(html));
      }),
      { numRuns: 3000 },
    );
  });

  it("never keeps a tag, and keeps text without tags, on arbitrary input", () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom("<", ">", "/", "s", "c", "r", "i", "p", "t", " ", "\n", "&", ";", "a") , maxLength: 60 }), (html) => {
        const text = htmlToText(html);
        if (!html.includes("<")) expect(text).toBe(regexHtmlToText(html));
        // Whatever survives of a `<` is a stray one: no `>` after it in the input.
        const lastOpen = text.lastIndexOf("<");
        if (lastOpen >= 0 && !text.includes("<>")) expect(html.slice(html.indexOf("<")).includes(">") && text.slice(lastOpen).includes(">")).toBe(false);
      }),
      { numRuns: 3000 },
    );
  });
});
