/**
 * HTML to text for a model, in one linear pass: no scripts, styles or tags,
 * entities for the common few. A page is attacker-chosen, so no step may
 * rescan the rest of the input per `<`: regexes such as `<[^>]+>` and
 * `<script[\s\S]*?<\/script>` did exactly that (160 KB of unclosed `<` took
 * 21 s, blocking the attempt past its timeouts and aborts). Each search
 * below either moves the cursor past what it scanned or, when it finds
 * nothing, is never repeated.
 */
const RAW_TEXT_ELEMENTS = new Set(["script", "style", "noscript"]);
const LINE_BREAKS = new Set(["br", "/p", "/div", "/li", "/h1", "/h2", "/h3", "/h4", "/h5", "/h6", "/tr"]);
const ENTITIES: Record<string, string> = { nbsp: " ", amp: "&", lt: "<", gt: ">", quot: '"', "#39": "'" };

export function htmlToText(html: string): string {
  return collapseWhitespace(decodeEntities(stripTags(html)));
}

function stripTags(html: string): string {
  const lower = html.toLowerCase();
  const out: string[] = [];
  const unclosed = new Set<string>();
  let cursor = 0;
  while (cursor < html.length) {
    const open = html.indexOf("<", cursor);
    if (open < 0) break;
    const close = html.indexOf(">", open + 1);
    // No `>` after this `<` means none after any later `<` either: the rest is text.
    if (close < 0) break;
    out.push(html.slice(cursor, open));
    if (close === open + 1) {
      out.push("<>");
      cursor = close + 1;
      continue;
    }
    const name = tagName(lower, open + 1, close);
    cursor = close + 1;
    if (RAW_TEXT_ELEMENTS.has(name) && !unclosed.has(name)) {
      const end = lower.indexOf(`</${name}>`, close + 1);
      if (end >= 0) {
        out.push(" ");
        cursor = end + name.length + 3;
        continue;
      }
      unclosed.add(name);
    }
    out.push(LINE_BREAKS.has(name) ? "\n" : " ");
  }
  out.push(html.slice(cursor));
  return out.join("");
}

/** `<br/>` -> "br", `</p >` -> "/p", `<script src=x>` -> "script" (lower-cased input; bounded by the tag). */
function tagName(lower: string, from: number, to: number): string {
  let end = from;
  if (lower[end] === "/") end += 1;
  while (end < to && /[a-z0-9]/.test(lower[end]!)) end += 1;
  return lower.slice(from, end);
}

function decodeEntities(text: string): string {
  return text.replace(/&(nbsp|amp|lt|gt|quot|#39);/g, (_, name: string) => ENTITIES[name]!);
}

function collapseWhitespace(text: string): string {
  return text
    .replace(/[ \t]+/g, " ")
    .replace(/ ?\n ?/g, "\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}
