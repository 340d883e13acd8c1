/**
 * Assistant (and thinking) events carry `{text, delta}` where `text` is the
 * message so far. Storing `text` in every event-log item makes the log grow
 * with the square of an answer's length, so the log keeps only `delta` plus
 * `textOffset` (how much of the message came before it) and `text` is
 * rebuilt on read by folding the deltas of the same message in order.
 */
export interface EventData {
  stream: string;
  seq: number;
  data: Record<string, unknown>;
}

/** The data to store: `text` replaced by `textOffset` when it is the cumulative text ending in `delta`. */
export function compactEventData(data: Record<string, unknown>): Record<string, unknown> {
  const { text, delta } = data;
  if (typeof text !== "string" || typeof delta !== "string" || !text.endsWith(delta)) return data;
  const { text: _text, ...rest } = data;
  return { ...rest, textOffset: text.length - delta.length };
}

export function needsTextRestore(data: Record<string, unknown>): boolean {
  return typeof data.textOffset === "number" && typeof data.delta === "string" && data.text === undefined;
}

/**
 * Rebuilds `text` for compacted events. `events` must be in seq order and
 * start early enough (at seq 1, or at a message start) for the fold to be
 * exact; where a gap makes the prefix unknown, `text` falls back to the delta.
 */
export function restoreEventText<E extends EventData>(events: E[]): E[] {
  const sofar = new Map<string, string>();
  return events.map((event) => {
    if (!needsTextRestore(event.data)) return event;
    const { textOffset, delta, ...rest } = event.data as { textOffset: number; delta: string };
    const before = textOffset === 0 ? "" : sofar.get(event.stream);
    const text = before !== undefined && before.length === textOffset ? before + delta : delta;
    sofar.set(event.stream, text);
    return { ...event, data: { ...rest, text, delta } };
  });
}
