import { randomUUID } from "node:crypto";
import { StreamCursor } from "../protocol/stream-cursor";
import { sessionKeyOf } from "../protocol/ws-agent";
import { GatewayClient, GatewayRequestError, type Frame } from "./gateway-client";

/**
 * Starts one run over WebSocket and follows its events to the end, resuming
 * by itself when the socket drops (API Gateway closes sockets after 2 h and
 * after 10 idle minutes): reconnect, `sessions.subscribe`, `events.replay`
 * after the last delivered `seq`, and let a StreamCursor merge replayed and
 * live events. The caller sees every event exactly once, in order.
 */
export interface RunEvent {
  runId: string;
  sessionKey: string;
  seq: number;
  stream: string;
  ts: number;
  data: Record<string, unknown>;
}

export interface FollowOptions {
  url: string;
  token: string;
  /** The `agent` params; an idempotencyKey is added when missing, so a re-send after a drop starts nothing new. */
  params: Record<string, unknown> & { message: string };
  onEvent: (event: RunEvent) => void;
  /** Told about each reconnect (the CLI prints a note). */
  onReconnect?: (attempt: number, afterSeq: number) => void;
  reconnectDelaysMs?: number[];
  /** With no event for this long and no terminal lifecycle yet, ask for a replay (a lost live frame). */
  idleReplayMs?: number;
  /** Tests: receives every client as it opens (to drop one on purpose). */
  onClient?: (client: GatewayClient) => void;
}

export interface FollowResult {
  runId: string;
  /** `ok`, or the failed run's status (`error`, `timeout`, `aborted`). */
  status: string;
  events: number;
  reconnects: number;
  terminal: RunEvent;
}

const DEFAULT_DELAYS = [250, 500, 1000, 2000, 5000];

export async function followRun(options: FollowOptions): Promise<FollowResult> {
  const follower = new Follower({ ...options, params: { idempotencyKey: randomUUID(), ...options.params } });
  return follower.run();
}

class Follower {
  private readonly cursors = new Map<string, StreamCursor<RunEvent>>();
  /** Released (in-order) events per run, kept until we know which run is ours. */
  private readonly outbox = new Map<string, RunEvent[]>();
  private runId: string | undefined;
  private client: GatewayClient | undefined;
  private reconnects = 0;
  private events = 0;
  private lastActivity = Date.now();
  private replaying = false;
  private done: ((result: FollowResult) => void) | undefined;
  private fail: ((error: Error) => void) | undefined;

  constructor(private readonly options: FollowOptions) {}

  run(): Promise<FollowResult> {
    return new Promise<FollowResult>((resolve, reject) => {
      this.done = resolve;
      this.fail = reject;
      void this.session(0);
    }).finally(() => {
      clearInterval(this.idleTimer);
      void this.client?.close();
    });
  }

  private readonly idleTimer = setInterval(() => {
    if (this.client?.open && Date.now() - this.lastActivity > (this.options.idleReplayMs ?? 10_000)) void this.replay();
  }, 1000).unref();

  /** One connection's life: connect, (re)start or resume, then wait for it to close. */
  private async session(attempt: number): Promise<void> {
    let opened = false;
    try {
      const client = await GatewayClient.open({
        url: this.options.url,
        token: this.options.token,
        onEvent: (frame) => this.onEvent(frame),
        onClose: () => {
          opened = true;
          this.onClose(attempt);
        },
      });
      opened = true;
      this.client = client;
      this.options.onClient?.(client);
      if (this.runId === undefined) await this.startRun(client);
      else await this.resume(client);
    } catch (error) {
      if (error instanceof GatewayRequestError) return this.fail?.(error);
      // Refused before it opened: retry here; once opened, its close handler retries.
      if (!opened) this.retry(attempt);
    }
  }

  private async startRun(client: GatewayClient): Promise<void> {
    const ack = await client.request("agent", this.options.params);
    if (!ack.ok) throw new GatewayRequestError(ack);
    this.runId = ack.payload.runId as string;
    if (ack.payload.status === "in_flight" || ack.payload.status === undefined) await this.replay();
    this.release();
  }

  private async resume(client: GatewayClient): Promise<void> {
    this.options.onReconnect?.(this.reconnects, this.cursor().delivered);
    await client.request("sessions.subscribe", { sessionKey: this.sessionKey() });
    await this.replay();
  }

  /** events.replay after the last delivered seq, page by page; the frames arrive as events. */
  private async replay(): Promise<void> {
    if (this.replaying || !this.client?.open || this.runId === undefined) return;
    this.replaying = true;
    try {
      for (;;) {
        this.lastActivity = Date.now();
        const res = await this.client.request("events.replay", { runId: this.runId, afterSeq: this.cursor().delivered });
        if (!res.ok || !res.payload?.hasMore) break;
      }
    } catch {
      // The socket dropped during the replay: the next session replays again.
    } finally {
      this.replaying = false;
    }
    if (this.cursor().gap()) setTimeout(() => void this.replay(), 200).unref();
  }

  private onEvent(frame: Frame): void {
    if (frame.event !== "agent") return;
    const event = frame.payload as RunEvent;
    this.lastActivity = Date.now();
    const released = this.cursorOf(event.runId).accept(event);
    if (released.length > 0) this.outbox.set(event.runId, [...(this.outbox.get(event.runId) ?? []), ...released]);
    this.release();
    if (this.runId !== undefined && this.cursor().gap()) void this.replay();
  }

  /** Hands in-order events of our run to the caller; finishes on the terminal lifecycle event. */
  private release(): void {
    if (this.runId === undefined) return;
    const ready = this.outbox.get(this.runId) ?? [];
    this.outbox.set(this.runId, []);
    for (const event of ready) {
      this.events += 1;
      this.options.onEvent(event);
      if (isTerminal(event)) {
        const status = event.data.phase === "end" ? "ok" : String(event.data.status ?? "error");
        this.done?.({ runId: this.runId, status, events: this.events, reconnects: this.reconnects, terminal: event });
        return;
      }
    }
  }

  private onClose(attempt: number): void {
    if (this.runId !== undefined && this.cursor().terminal) return;
    this.retry(attempt);
  }

  private retry(attempt: number): void {
    const delays = this.options.reconnectDelaysMs ?? DEFAULT_DELAYS;
    const delay = delays[Math.min(attempt, delays.length - 1)]!;
    this.reconnects += 1;
    setTimeout(() => void this.session(attempt + 1), delay);
  }

  private cursor(): StreamCursor<RunEvent> {
    return this.cursorOf(this.runId as string);
  }

  private cursorOf(runId: string): StreamCursor<RunEvent> {
    let cursor = this.cursors.get(runId);
    if (!cursor) this.cursors.set(runId, (cursor = new StreamCursor<RunEvent>()));
    return cursor;
  }

  private sessionKey(): string {
    const params = this.options.params as Parameters<typeof sessionKeyOf>[0];
    return sessionKeyOf(params);
  }
}

function isTerminal(event: RunEvent): boolean {
  return event.stream === "lifecycle" && (event.data.phase === "end" || event.data.phase === "error");
}
