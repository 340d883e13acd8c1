/**
 * The client half of "never lose an event", pure: feed it every run event a
 * connection receives (live or replayed, in any order, possibly twice) and it
 * releases them exactly once, in `seq` order, with no gaps.
 *
 *   - seq <= delivered: a duplicate (a replay overlapping the live stream); dropped.
 *   - seq == delivered + 1: released, followed by any buffered successors.
 *   - seq  > delivered + 1: held; `gap()` says a replay from `delivered` is due.
 *
 * The reconnect recipe (docs/protocol.md): connect, `sessions.subscribe`,
 * then `events.replay {runId, afterSeq: cursor.delivered}`; feed everything
 * to the cursor. Call replay again whenever `gap()` is set (a live event
 * can be missed in the moment between subscribing and the replay's read)
 * or the stream has been silent for a while without a terminal lifecycle.
 */
export interface SequencedEvent {
  seq: number;
  stream: string;
  data: Record<string, unknown>;
}

export class StreamCursor<E extends SequencedEvent = SequencedEvent> {
  private readonly held = new Map<number, E>();
  private last = 0;
  private ended = false;

  constructor(delivered = 0) {
    this.last = delivered;
  }

  /** Highest seq released so far: what to pass as `afterSeq` to `events.replay`. */
  get delivered(): number {
    return this.last;
  }

  /** True once `lifecycle end` or `error` was released: nothing follows it. */
  get terminal(): boolean {
    return this.ended;
  }

  /** Events received ahead of a missing one. */
  get waiting(): number {
    return this.held.size;
  }

  /** True when an event is held behind a missing one (ask for a replay). */
  gap(): boolean {
    return this.held.size > 0;
  }

  /** Accepts one event; returns those now releasable, in order. */
  accept(event: E): E[] {
    if (event.seq <= this.last || this.held.has(event.seq)) return [];
    this.held.set(event.seq, event);
    const released: E[] = [];
    for (let next = this.held.get(this.last + 1); next; next = this.held.get(this.last + 1)) {
      this.held.delete(next.seq);
      this.last = next.seq;
      if (next.stream === "lifecycle") {
        // `start` after an `error` is a retry of the same run (see agent.wait's grace): not over yet.
        if (next.data.phase === "end" || next.data.phase === "error") this.ended = true;
        else if (next.data.phase === "start") this.ended = false;
      }
      released.push(next);
    }
    return released;
  }
}
