import { appendEvent, eventExpiry, lastEventSeq, type EventStream, type RunEvent } from "../aws/event-log";
import { removeConnection, subscribers, subscriptionRevision } from "../aws/connections";
import type { Db } from "../aws/dynamo";
import type { FramePusher } from "../aws/push";
import { deliverFrame } from "./delivery";
import { framesForEvent } from "./frames";

export interface EmitterDeps {
  db: Db;
  pusher: FramePusher;
  retentionDays: number;
  log?: { warn(message: string, extra?: Record<string, unknown>): void };
}

export { agentEventFrame } from "./frames";

/**
 * Emits a run's events: each gets the next per-run sequence number, is written
 * to the event log first (so a reconnecting client can replay it) and then
 * fanned out to the session's subscribed connections. Emission is queued so the
 * caller never waits on the network per token; `flush()` waits for all of it.
 * Only one task of a run emits at a time (the state machine is sequential),
 * and the conditional put makes a racing writer detectable instead of silent.
 */
export class RunEventEmitter {
  private chain: Promise<void> = Promise.resolve();
  private failure: unknown;
  /** The subscriber list with the session's subscription revision it was read at. */
  private cachedSubscribers: { rev: number; ids: string[] } | undefined;

  private constructor(
    private readonly deps: EmitterDeps,
    readonly runId: string,
    readonly sessionKey: string,
    private seq: number,
  ) {}

  static async open(deps: EmitterDeps, runId: string, sessionKey: string): Promise<RunEventEmitter> {
    return new RunEventEmitter(deps, runId, sessionKey, await lastEventSeq(deps.db, runId));
  }

  get lastSeq(): number {
    return this.seq;
  }

  emit(stream: EventStream, data: Record<string, unknown>): void {
    this.chain = this.chain.then(() => this.write(stream, data)).catch((error: unknown) => {
      this.failure ??= error;
    });
  }

  async flush(): Promise<void> {
    await this.chain;
    if (this.failure) {
      const failure = this.failure;
      this.failure = undefined;
      throw failure;
    }
  }

  private async write(stream: EventStream, data: Record<string, unknown>): Promise<void> {
    const ts = this.deps.db.now();
    let event: RunEvent;
    for (;;) {
      event = { v: 1, runId: this.runId, sessionKey: this.sessionKey, seq: this.seq + 1, stream, ts, data, expiresAt: eventExpiry(ts, this.deps.retentionDays) };
      if (await appendEvent(this.deps.db, event)) break;
      // Someone else wrote this number (a zombie task): continue after theirs, never overwrite.
      this.seq = await lastEventSeq(this.deps.db, this.runId);
    }
    this.seq = event.seq;
    await this.fanOut(event);
  }

  private async fanOut(event: RunEvent): Promise<void> {
    const frames = framesForEvent(event);
    const ids = await this.subscriberIds();
    await Promise.all(
      ids.map(async (connectionId) => {
        try {
          for (const frame of frames) {
            if ((await deliverFrame(this.deps.pusher, connectionId, frame)) !== "gone") continue;
            // The client went away: drop it (and its subscriptions) and never fail the run.
            this.cachedSubscribers = undefined;
            await removeConnection(this.deps.db, connectionId);
            return;
          }
        } catch (error) {
          // A failed delivery never fails the run: the event is in the log for replay.
          this.deps.log?.warn("event delivery failed", { connectionId, seq: event.seq, error: String(error) });
        }
      }),
    );
  }

  /**
   * The list is reused while the session's subscription revision stays the
   * same (one GetItem per fan-out instead of a Query). The revision is read
   * before the list, so a subscription that lands in between bumps a revision
   * this emitter has not seen yet and the next fan-out reads the list again:
   * a subscriber never misses an event fanned out after its subscription was
   * acknowledged.
   */
  private async subscriberIds(): Promise<string[]> {
    const rev = await subscriptionRevision(this.deps.db, this.sessionKey);
    if (this.cachedSubscribers?.rev === rev) return this.cachedSubscribers.ids;
    const ids = await subscribers(this.deps.db, this.sessionKey, this.runId);
    this.cachedSubscribers = { rev, ids };
    return ids;
  }
}
