/**
 * Caps a text at `maxChars` keeping its head and tail (errors and summaries
 * tend to sit at the end of tool output), with a marker saying how much was cut.
 */
export function capText(text: string, maxChars: number): { text: string; truncated: boolean } {
  if (text.length <= maxChars) return { text, truncated: false };
  const marker = (cut: number) => `\n\n[… ${cut} characters truncated …]\n\n`;
  const budget = Math.max(0, maxChars - marker(text.length).length);
  const head = Math.ceil(budget * 0.7);
  const tail = budget - head;
  const cut = text.length - head - tail;
  return { text: `${text.slice(0, head)}${marker(cut)}${tail > 0 ? text.slice(text.length - tail) : ""}`, truncated: true };
}
