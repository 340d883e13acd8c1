import { appendEventBatch, eventExpiry, eventLogHead, MAX_BATCH_EVENTS, releaseReservation, type EventStream, type RunEvent } from "../aws/event-log";
import { removeConnection, subscriberTargets, type SubscriberTarget } from "../aws/connections";
import type { Db } from "../aws/dynamo";
import type { FramePusher } from "../aws/push";
import { deliverFrame } from "./delivery";
import { framesForEvent } from "./frames";
import { EventBatcher, isBatchable, lostEventData } from "./event-batch";

export interface EmitterDeps {
  db: Db;
  pusher: FramePusher;
  retentionDays: number;
  log?: { warn(message: string, extra?: Record<string, unknown>): void };
}

export { agentEventFrame } from "./frames";

export interface EmitterOptions {
  /**
   * False for an emitter that logs a few events and closes (an abort, a pause,
   * an approval, a compaction): no text follows its events, so its writes keep
   * no reservation and its close has none to give back. Default true: the
   * run's attempt streams text after its events.
   */
  streamsText?: boolean;
}

/**
 * Emits a run's events: each gets the next per-run sequence number and is
 * fanned out to the session's subscribed connections. Emission is queued so
 * the caller never waits on the network per token; `flush()` waits for all of
 * it and leaves every emitted event in the log.
 *
 * The log is written in batches (docs/protocol.md, "Event log"): streamed
 * text (assistant, thinking, tool updates) goes out at once and is logged a
 * few events per item (EventBatcher: at most every 500 ms, ~1 KB, 16
 * events); every other event is logged, with whatever text is pending,
 * before it is sent. Text is only sent unlogged within a reservation the log
 * already holds (`reservedThrough`), so a retry after a crash starts after
 * every seq that could have been sent and first logs the unlogged ones as
 * retractions (no seq is used twice, none is missing). A connection that
 * subscribes while text is unlogged gets that text re-sent before the next
 * event, or after the write that logs it, so a replay plus the live stream
 * still miss nothing.
 *
 * Only one task of a run emits at a time (the state machine is sequential),
 * and the conditional put makes a racing writer detectable instead of silent.
 */
export class RunEventEmitter {
  private chain: Promise<void> = Promise.resolve();
  private failure: unknown;
  /** The subscriber list as last read (unlogged text goes to it without another read). */
  private cachedSubscribers: SubscriberTarget[] | undefined;
  /** Connections already sent this emitter's events (a newly listed one gets the unconfirmed backlog). */
  private readonly known = new Set<string>();
  /** Sent while unlogged, and not yet followed by a list read after the write that logged them. */
  private unconfirmed: RunEvent[] = [];
  private readonly batch = new EventBatcher(() => this.enqueue(() => this.persistPending(true)));
  /** Seqs the log reserves for this emitter, and the key of the last item it wrote (to give them back). */
  private reserved: number;
  private lastItemFrom: number | undefined;
  /** A newer task of the run writes now (a re-drive superseded this one, or took its transcript claim): nothing more is sent or logged. */
  private silenced = false;

  private constructor(
    private readonly deps: EmitterDeps,
    readonly runId: string,
    readonly sessionKey: string,
    private seq: number,
    private logged: number,
    private readonly streamsText: boolean,
  ) {
    this.reserved = logged;
  }

  static async open(deps: EmitterDeps, runId: string, sessionKey: string, options: EmitterOptions = {}): Promise<RunEventEmitter> {
    const head = await eventLogHead(deps.db, runId);
    const emitter = new RunEventEmitter(deps, runId, sessionKey, head.logged, head.logged, options.streamsText ?? true);
    // The last writer stopped with seqs reserved and unlogged (it may have sent them): log them first.
    if (head.reservedThrough > head.logged) emitter.enqueue(() => emitter.fillLostSeqs(head.reservedThrough));
    return emitter;
  }

  /**
   * The emitter of a run whose start this task has just recorded (markRunning
   * moved it from accepted or queued to running): nobody has logged an event
   * for it yet, so the log's head is not read. An abort before the start
   * writes the run's status before it logs anything, which makes the start
   * fail; a retried or re-driven start finds the run running and opens with
   * the read. Should another writer have logged all the same, the first
   * conditional put finds its item and the event is renumbered after it
   * (persist): never overwritten.
   */
  static fresh(deps: EmitterDeps, runId: string, sessionKey: string, options: EmitterOptions = {}): RunEventEmitter {
    return new RunEventEmitter(deps, runId, sessionKey, 0, 0, options.streamsText ?? true);
  }

  get lastSeq(): number {
    return this.seq;
  }

  emit(stream: EventStream, data: Record<string, unknown>): void {
    if (this.silenced) return;
    this.enqueue(() => this.write(stream, data));
  }

  /**
   * A newer task of the run took over while this one ran (a re-drive, or a
   * retry that took the transcript claim): its emitter already logged this
   * one's reserved seqs as retractions, so anything this one sent or logged
   * from now on (its own retraction included) would land after the new
   * attempt's text and withdraw it. Pending text is dropped.
   */
  silence(): void {
    this.silenced = true;
    this.batch.take();
  }

  /**
   * Waits until everything emitted is logged and sent, and gives back the
   * reservation the last write kept (one write, when it was not the run's
   * last event). `keepReservation`: the caller emits again with this emitter
   * soon, so the separate release write is skipped; whoever holds the emitter
   * last flushes without it.
   */
  async flush(options: { keepReservation?: boolean } = {}): Promise<void> {
    this.batch.cancel();
    this.enqueue(() => this.close(options.keepReservation === true));
    await this.chain;
    if (this.failure) {
      const failure = this.failure;
      this.failure = undefined;
      throw failure;
    }
  }

  /**
   * Waits until every write queued so far is done, and throws a failed one's
   * error, but leaves text that waits in its batch (within the reservation)
   * for the next write or the last flush to log: the caller emits again
   * with this emitter before it closes it.
   */
  async settle(): Promise<void> {
    await this.chain;
    if (this.failure) {
      const failure = this.failure;
      this.failure = undefined;
      throw failure;
    }
  }

  private enqueue(step: () => Promise<void>): void {
    this.chain = this.chain.then(step).catch((error: unknown) => {
      this.failure ??= error;
    });
  }

  private next(stream: EventStream, data: Record<string, unknown>): RunEvent {
    const ts = this.deps.db.now();
    this.seq += 1;
    return { v: 1, runId: this.runId, sessionKey: this.sessionKey, seq: this.seq, stream, ts, data, expiresAt: eventExpiry(ts, this.deps.retentionDays) };
  }

  private async write(stream: EventStream, data: Record<string, unknown>): Promise<void> {
    if (this.silenced) return;
    // Hand the seq out only after the filler (queued before) has moved `seq` past the lost ones.
    const event = this.next(stream, data);
    if (isBatchable(stream, data) && event.seq <= this.reserved && this.batch.fits(event)) {
      this.batch.add(event);
      // Unlogged text goes to the connections already listed, without reading the list again: one that
      // subscribes meanwhile is sent it right after the write that logs it (confirmBacklog), which reads
      // the list after that write, so its replay or that re-send has it (docs/protocol.md).
      await this.fanOut(event, { listed: true });
      this.unconfirmed.push(event);
      if (this.batch.full()) await this.persistPending(true);
      return;
    }
    // Logged before it is sent, with the text still pending. In a stream of text, every event but the run's
    // last (its lifecycle end or error) may be followed by text, so the write keeps a reservation for it:
    // that text is sent at once and logged with the next write instead of in an item of its own; the close
    // gives back what was not used.
    const logged = await this.persist([...this.batch.take(), event], this.streamsText ? !endsTheRun(stream, data) : isBatchable(stream, data));
    if (logged) await this.fanOut(logged);
  }

  /** The timer's or a full batch's write; then anyone who subscribed meanwhile gets what it logged. */
  private async persistPending(keepReservation: boolean): Promise<void> {
    if (this.silenced) return;
    const pending = this.batch.take();
    if (pending.length === 0) return;
    await this.persist(pending, keepReservation);
    await this.confirmBacklog();
  }

  /**
   * Writes `events` as one item (the last one reserves RESERVED_SEQS more
   * when `keepReservation`). On a lost race (a zombie task and its retry
   * writing at once) the text sent unlogged is dropped (the other writer's
   * filler covers its seqs) and the durable event, if any, is renumbered after
   * the other writer's: never overwritten. Answers the durable event as logged.
   */
  private async persist(events: RunEvent[], keepReservation: boolean): Promise<RunEvent | undefined> {
    let batch = events;
    for (;;) {
      const last = batch[batch.length - 1]!;
      const reservedThrough = keepReservation ? last.seq + RESERVED_SEQS : last.seq;
      if (await appendEventBatch(this.deps.db, { events: batch, reservedThrough })) {
        this.logged = last.seq;
        this.reserved = reservedThrough;
        this.lastItemFrom = batch[0]!.seq;
        return last;
      }
      const head = await eventLogHead(this.deps.db, this.runId);
      this.deps.log?.warn("event log raced by another writer", { runId: this.runId, from: batch[0]!.seq, head });
      this.seq = this.logged = this.reserved = head.reservedThrough;
      this.unconfirmed = [];
      const durable = isBatchable(last.stream, last.data) ? undefined : last;
      if (!durable) return undefined;
      batch = [{ ...durable, seq: this.seq + 1 }];
      this.seq += 1;
    }
  }

  /** End of a task: everything pending logged, and the reservation given back (the next writer needs no filler). */
  private async close(keepReservation: boolean): Promise<void> {
    if (this.silenced) return;
    const pending = this.batch.take();
    if (pending.length > 0) {
      await this.persist(pending, keepReservation);
      await this.confirmBacklog();
      return;
    }
    if (!keepReservation && this.reserved > this.logged && this.lastItemFrom !== undefined) {
      if (await releaseReservation(this.deps.db, this.runId, this.lastItemFrom, this.reserved)) this.reserved = this.logged;
    }
  }

  /** Seqs a stopped writer reserved and did not log: logged now as retractions of whatever text it sent with them. */
  private async fillLostSeqs(reservedThrough: number): Promise<void> {
    while (this.seq < reservedThrough) {
      const lost: RunEvent[] = [];
      while (this.seq < reservedThrough && lost.length < MAX_BATCH_EVENTS) lost.push(this.next("assistant", lostEventData()));
      if (!(await this.persist(lost, false))) return;
      for (const event of lost) await this.fanOut(event);
    }
  }

  /** `listed`: send to the list as last read (unlogged text), else read the list first. */
  private async fanOut(event: RunEvent, options: { listed?: boolean } = {}): Promise<void> {
    const { targets, fresh } = await this.subscriberTargets(options.listed === true);
    const backlog = this.unconfirmed;
    await Promise.all(targets.map((target) => this.deliverAll(target, fresh.has(target.connectionId) ? [...backlog, event] : [event])));
    if (!this.batch.holds(event.seq)) this.unconfirmed = [];
  }

  /** After a write: a connection that subscribed since the backlog was sent gets it now (it may have read the log before the write). */
  private async confirmBacklog(): Promise<void> {
    const backlog = this.unconfirmed;
    this.unconfirmed = [];
    if (backlog.length === 0) return;
    const { targets, fresh } = await this.subscriberTargets();
    await Promise.all(targets.filter((t) => fresh.has(t.connectionId)).map((target) => this.deliverAll(target, backlog)));
  }

  private async deliverAll(target: SubscriberTarget, events: RunEvent[]): Promise<void> {
    for (const event of events) if (!(await this.deliver(target, event))) return;
  }

  /** The event's frames for the target's surface, in order; false when the client is gone (dropped). A failed post never fails the run. */
  private async deliver({ connectionId, surface }: SubscriberTarget, event: RunEvent): Promise<boolean> {
    try {
      for (const frame of framesForEvent(event, surface)) {
        if ((await deliverFrame(this.deps.pusher, connectionId, frame)) !== "gone") continue;
        // The client went away: drop it (and its subscriptions) and never fail the run.
        this.cachedSubscribers = undefined;
        await removeConnection(this.deps.db, connectionId);
        return false;
      }
    } catch (error) {
      // A failed delivery never fails the run: the event is (or will be) in the log for replay.
      this.deps.log?.warn("event delivery failed", { connectionId, seq: event.seq, error: String(error) });
    }
    return true;
  }

  /**
   * The subscriber list, read (one consistent Query) after the write that
   * logged the event: a subscription that landed before the read is in the
   * list, and one that landed after it has the event in its replay, so a
   * subscriber never misses an event logged after its subscription was
   * acknowledged. `fresh`: listed connections this emitter never sent to.
   * `listed`: the list as last read, when there is one (unlogged text only: a
   * connection it misses gets that text after the write that logs it).
   */
  private async subscriberTargets(listed = false): Promise<{ targets: SubscriberTarget[]; fresh: Set<string> }> {
    const targets = listed && this.cachedSubscribers ? this.cachedSubscribers : await subscriberTargets(this.deps.db, this.sessionKey, this.runId);
    this.cachedSubscribers = targets;
    const fresh = new Set(targets.map((t) => t.connectionId).filter((id) => !this.known.has(id)));
    for (const id of fresh) this.known.add(id);
    return { targets, fresh };
  }
}

/** Seqs a text stream may send ahead of the log: at most one batch's worth, so one filler item covers them. */
const RESERVED_SEQS = MAX_BATCH_EVENTS - 1;

/** The run's last event: nothing is emitted after it, so its write keeps no reservation. */
function endsTheRun(stream: EventStream, data: Record<string, unknown>): boolean {
  return stream === "lifecycle" && (data.phase === "end" || data.phase === "error");
}
