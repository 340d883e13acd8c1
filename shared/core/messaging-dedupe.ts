/**
 * Messaging-tool dedupe (seed 001 "Formación + supresión de respuestas";
 * reference §M 110): when the agent already sent a text with the `message`
 * tool, a final payload repeating it is not sent again. Texts are compared
 * normalized (lowercase, emoji stripped, whitespace collapsed); one that
 * contains, or is contained in, a sent text is a duplicate. Texts shorter
 * than MIN_DUPLICATE_TEXT_LENGTH once normalized never match ("ok" is not a
 * repeat of "ok, sent the report").
 */
export const MIN_DUPLICATE_TEXT_LENGTH = 10;

const EMOJI = /[\p{Extended_Pictographic}\p{Emoji_Modifier}\u{FE0F}\u{200D}]/gu;

export function normalizeForDedupe(text: string): string {
  return text.toLowerCase().replace(EMOJI, "").replace(/\s+/g, " ").trim();
}

export function isMessagingDuplicate(text: string, sentTexts: readonly string[]): boolean {
  const normalized = normalizeForDedupe(text);
  if (normalized.length < MIN_DUPLICATE_TEXT_LENGTH) return false;
  return sentTexts.some((sent) => {
    const other = normalizeForDedupe(sent);
    return other.length >= MIN_DUPLICATE_TEXT_LENGTH && (normalized.includes(other) || other.includes(normalized));
  });
}
