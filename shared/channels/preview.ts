import type { Db } from "../aws/dynamo";
import { streamableText } from "../core/silent-prefix";
import type { Log } from "../ports/run-deps";
import { claimPreviewPart, openLedger, readLedger, recordPreviewPart, recordPreviewRestored, releasePart, type DeliveryLedger, type LedgerPart } from "./ledger";
import type { Messenger } from "./messenger";
import { withRetry } from "./platform-call";
import { afterSend, beforeSend, type OutboundRef } from "./outbound-hooks";

/**
 * The streamed preview of a channel reply: the first message is sent as soon
 * as there is text that cannot be NO_REPLY, then edited as the answer grows,
 * at most once per `editIntervalMs` (and later when the platform asks with
 * 429 retry_after). It is ledger part 0 (shared/channels/ledger.ts), so a
 * later attempt of the run, and finalize, edit the same message: a failed
 * attempt's text is replaced, never left half-shown, and the final text
 * is an edit (repeatable) rather than a second send.
 *
 * An attempt can outlive its run (its execution stopped or timed out while the
 * Lambda still streams). The ledger's `closing` fence keeps such a preview from
 * overwriting the final reply: it stops once the final delivery has begun, and
 * an edit of its own that raced the final one puts the final text back.
 */
export class ChannelPreview {
  private text = "";
  /** The streamed text the preview shows (before message_sending rewrote it). */
  private shown = "";
  /** What the platform message reads now. */
  private shownText = "";
  private messageId: string | undefined;
  private disabled = false;
  private nextPushAt = 0;
  private timer: NodeJS.Timeout | undefined;
  private inflight: Promise<void> = Promise.resolve();
  private acked: Promise<void> = Promise.resolve();
  edits = 0;

  constructor(
    private readonly deps: { db: Db; log: Log },
    private readonly runId: string,
    private readonly messenger: Messenger,
    private readonly ref: OutboundRef = { runId, sessionKey: "", channel: "webhook" },
    private readonly now: () => number = Date.now,
  ) {}

  add(delta: string): void {
    this.text += delta;
    this.schedule();
  }

  /** A new assistant message starts (after tool calls): its text replaces the preview's. */
  restart(): void {
    this.text = "";
  }

  /**
   * The typing indicator / `eyes` reaction, when the attempt starts (not in
   * the webhook request: the platform's 200 waits for nothing but the
   * accept). Best effort: a failure is ignored; settle waits for it.
   */
  acknowledge(): void {
    this.acked = this.messenger.ack().catch((error: Error) => this.deps.log.warn("channel typing indicator not sent", { runId: this.runId, error: error.message }));
  }

  /** Waits for the send or edit in flight; what is still pending is left to finalize's exact final edit. */
  async settle(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await Promise.all([this.inflight, this.acked]);
  }

  private schedule(): void {
    if (this.timer || this.disabled) return;
    const wait = Math.max(0, this.nextPushAt - this.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.inflight = this.inflight.then(() => this.push()).catch((error: Error) => {
        this.disabled = true;
        this.deps.log.warn("channel preview stopped", { runId: this.runId, error: error.message });
      });
    }, wait);
  }

  /**
   * One send or edit of the preview. message_sending sees each one (kind
   * `preview`) and may rewrite it; a cancel stops the preview (the final
   * text then goes through message_sending again at finalize).
   */
  private async push(): Promise<void> {
    const visible = [...streamableText(this.text)].slice(0, this.messenger.limit).join("");
    if (visible === "" || visible === this.shown || this.disabled) return;
    if (this.messageId && finalBegun(await readLedger(this.deps.db, this.runId))) {
      this.disabled = true;
      return;
    }
    this.nextPushAt = this.now() + this.messenger.editIntervalMs;
    const decision = await beforeSend(this.ref, visible, { kind: "preview", ...(this.messageId ? { messageId: this.messageId } : {}) });
    if (decision.cancelled) {
      this.disabled = true;
      return;
    }
    const text = decision.text;
    if (!this.messageId) {
      const opened = await this.open(text);
      if (opened === "none") return;
      if (opened === "sent" || this.shownText === text) {
        this.shown = visible;
        if (opened === "sent") await afterSend(this.ref, text, { kind: "preview", messageId: this.messageId });
        return;
      }
    }
    const edited = await this.messenger.edit(this.messageId!, text);
    if (!edited.ok) {
      if (edited.retryAfterMs !== undefined) this.nextPushAt = this.now() + edited.retryAfterMs;
      else if (!edited.retryable) this.disabled = true;
      return;
    }
    this.edits++;
    this.shown = visible;
    this.shownText = text;
    if (!(await recordPreviewPart(this.deps.db, this.runId, { state: "sent", messageId: this.messageId, text }))) {
      await this.restoreFinal();
      return;
    }
    await afterSend(this.ref, text, { kind: "preview", messageId: this.messageId });
  }

  /** Sends the preview message (ledger part 0), or adopts the one an earlier attempt sent. */
  private async open(text: string): Promise<"sent" | "adopted" | "none"> {
    const ledger = await openLedger(this.deps.db, this.runId);
    if (finalBegun(ledger)) {
      this.disabled = true;
      return "none";
    }
    if (await claimPreviewPart(this.deps.db, this.runId)) {
      const sent = await this.messenger.send(text);
      if (!sent.ok) {
        // A clean failure sent nothing: free part 0 for finalize (only a crash leaves it claimed, outcome unknown).
        await releasePart(this.deps.db, this.runId, 0);
        this.disabled = true;
        return "none";
      }
      this.messageId = sent.data.messageId;
      this.shownText = text;
      if (!(await recordPreviewPart(this.deps.db, this.runId, { state: "sent", messageId: this.messageId, text }))) {
        await this.restoreFinal();
        return "none";
      }
      return "sent";
    }
    const earlier = (await readLedger(this.deps.db, this.runId))?.parts["0"];
    if (earlier?.state !== "sent" || !earlier.messageId) {
      this.disabled = true;
      return "none";
    }
    this.messageId = earlier.messageId;
    this.shownText = earlier.text ?? "";
    return "adopted";
  }

  /**
   * The final delivery began while this preview's send or edit was in flight,
   * so the platform may have applied ours last: make part 0 read what the
   * final delivery decided (its `closing`), and stop.
   */
  private async restoreFinal(): Promise<void> {
    this.disabled = true;
    const closing = (await readLedger(this.deps.db, this.runId))?.closing;
    const messageId = this.messageId!;
    if (closing?.remove) {
      await withRetry(() => this.messenger.remove(messageId));
      await this.recordRestored({ state: "cancelled", messageId });
    } else if (closing?.text !== undefined) {
      const text = closing.text;
      const restored = await withRetry(() => this.messenger.edit(messageId, text));
      if (restored.ok) await this.recordRestored({ state: "sent", messageId, text });
      else this.deps.log.warn("channel preview not restored to the final reply", { runId: this.runId, error: restored.error });
    }
  }

  /**
   * Part 0 becomes this message again, unless the final delivery took over
   * the preview's unrecorded claim and sent the final text as its own
   * message: this one then goes, so the final text shows once.
   */
  private async recordRestored(part: LedgerPart): Promise<void> {
    if (await recordPreviewRestored(this.deps.db, this.runId, part)) return;
    if (part.state === "cancelled") return;
    const removed = await withRetry(() => this.messenger.remove(part.messageId!));
    if (!removed.ok) this.deps.log.warn("channel preview duplicating the final reply not removed", { runId: this.runId, error: removed.error });
  }
}

/** The final delivery has begun (or ended): the preview must not touch part 0 any more. */
function finalBegun(ledger: DeliveryLedger | undefined): boolean {
  return ledger?.done === true || ledger?.closing !== undefined;
}
