import { MAX_BATCH_EVENTS, type EventStream, type RunEvent } from "../aws/event-log";
import { compactEventData } from "../core/event-text";

/**
 * How the emitter batches its log writes (issue 15, streaming cost): text
 * events already go out at the 150 ms coalescing cadence; logging each one
 * cost a write unit per event. Pending text is logged together when the
 * oldest has waited EVENT_BATCH_MS, when it reaches about one write unit
 * (EVENT_BATCH_BYTES: a DynamoDB write unit is 1 KB), or when any other
 * event is logged. Readers of the log (REST, `events.replay`, the OpenAI
 * endpoint's follower) therefore see text at most EVENT_BATCH_MS late; the
 * live WebSocket stream is not delayed.
 */
export const EVENT_BATCH_MS = 500;
export const EVENT_BATCH_BYTES = 900;

/** Streamed text: sent at once and logged in batches. Everything else is logged before it is sent. */
export function isBatchable(stream: EventStream, data: Record<string, unknown>): boolean {
  return stream === "assistant" || stream === "thinking" || (stream === "tool" && data.phase === "update");
}

/** What a seq a stopped writer sent but never logged is logged as: a retraction of the text it carried. */
export function lostEventData(): Record<string, unknown> {
  return { text: "", delta: "", reset: true, reason: "lost" };
}

/** The pending (sent, not yet logged) text events and the timer that logs them. */
export class EventBatcher {
  private pending: RunEvent[] = [];
  private bytes = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly onTimer: () => void) {}

  /** Room for this one and still one more (the durable event that may close the batch). */
  fits(_event: RunEvent): boolean {
    return this.pending.length < MAX_BATCH_EVENTS - 1;
  }

  add(event: RunEvent): void {
    this.pending.push(event);
    this.bytes += approximateBytes(event);
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.onTimer();
    }, EVENT_BATCH_MS);
  }

  full(): boolean {
    return this.bytes >= EVENT_BATCH_BYTES || this.pending.length >= MAX_BATCH_EVENTS - 1;
  }

  holds(seq: number): boolean {
    return this.pending.some((event) => event.seq === seq);
  }

  /** The pending events, in order; the batch is empty after. */
  take(): RunEvent[] {
    this.cancel();
    const taken = this.pending;
    this.pending = [];
    this.bytes = 0;
    return taken;
  }

  cancel(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/** Its stored size, roughly (as the log keeps it: without the cumulative text). */
function approximateBytes(event: RunEvent): number {
  return Buffer.byteLength(JSON.stringify(compactEventData(event.data)), "utf8") + 40;
}
