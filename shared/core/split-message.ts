/**
 * Splits an answer longer than a platform's message limit (Telegram 4096
 * characters) into parts, preferring a paragraph break, then a line break,
 * then a sentence end, then a space; a hard cut only when a part has none.
 * Parts keep their text exactly: joined with what was cut at, they are the answer.
 */
export function splitMessage(text: string, limit: number): string[] {
  const parts: string[] = [];
  let rest = text;
  while ([...rest].length > limit) {
    const window = [...rest].slice(0, limit).join("");
    const cut = bestCut(window);
    parts.push(window.slice(0, cut).trimEnd());
    rest = rest.slice(cut).trimStart();
  }
  if (rest.trim() !== "" || parts.length === 0) parts.push(rest);
  return parts.filter((part, i) => part !== "" || i === 0);
}

function bestCut(window: string): number {
  const floor = Math.floor(window.length / 2);
  const candidates = [
    window.lastIndexOf("\n\n"),
    window.lastIndexOf("\n"),
    lastSentenceEnd(window),
    window.lastIndexOf(" "),
  ];
  for (const at of candidates) if (at >= floor) return at + 1;
  return window.length;
}

function lastSentenceEnd(window: string): number {
  let found = -1;
  for (const match of window.matchAll(/[.!?…](?=\s)/g)) found = match.index ?? found;
  return found;
}
