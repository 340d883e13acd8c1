import type { Db } from "../aws/dynamo";
import { streamableText } from "../core/silent-prefix";
import type { Log } from "../ports/run-deps";
import { claimPart, openLedger, readLedger, recordPart, releasePart } from "./ledger";
import type { Messenger } from "./messenger";

/**
 * The streamed preview of a channel reply: the first message is sent as soon
 * as there is text that cannot be NO_REPLY, then edited as the answer grows,
 * at most once per `editIntervalMs` (and later when the platform asks with
 * 429 retry_after). It is ledger part 0 (shared/channels/ledger.ts), so a
 * later attempt of the run, and finalize, edit the same message: a failed
 * attempt's text is replaced, never left half-shown, and the final text
 * is an edit (repeatable) rather than a second send.
 */
export class ChannelPreview {
  private text = "";
  private shown = "";
  private messageId: string | undefined;
  private disabled = false;
  private nextPushAt = 0;
  private timer: NodeJS.Timeout | undefined;
  private inflight: Promise<void> = Promise.resolve();
  edits = 0;

  constructor(
    private readonly deps: { db: Db; log: Log },
    private readonly runId: string,
    private readonly messenger: Messenger,
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

  /** Waits for the send or edit in flight; what is still pending is left to finalize's exact final edit. */
  async settle(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.inflight;
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

  private async push(): Promise<void> {
    const visible = [...streamableText(this.text)].slice(0, this.messenger.limit).join("");
    if (visible === "" || visible === this.shown || this.disabled) return;
    this.nextPushAt = this.now() + this.messenger.editIntervalMs;
    if (!this.messageId && !(await this.open(visible))) return;
    if (this.shown === visible) return;
    const edited = await this.messenger.edit(this.messageId!, visible);
    if (!edited.ok) {
      if (edited.retryAfterMs !== undefined) this.nextPushAt = this.now() + edited.retryAfterMs;
      else if (!edited.retryable) this.disabled = true;
      return;
    }
    this.edits++;
    this.shown = visible;
    await recordPart(this.deps.db, this.runId, 0, { state: "sent", messageId: this.messageId, text: visible });
  }

  /** Sends the preview message (ledger part 0), or adopts the one an earlier attempt sent. */
  private async open(visible: string): Promise<boolean> {
    const ledger = await openLedger(this.deps.db, this.runId);
    if (ledger.done) {
      this.disabled = true;
      return false;
    }
    if (await claimPart(this.deps.db, this.runId, 0)) {
      const sent = await this.messenger.send(visible);
      if (!sent.ok) {
        // A clean failure sent nothing: free part 0 for finalize (only a crash leaves it claimed, outcome unknown).
        await releasePart(this.deps.db, this.runId, 0);
        this.disabled = true;
        return false;
      }
      this.messageId = sent.data.messageId;
      this.shown = visible;
      await recordPart(this.deps.db, this.runId, 0, { state: "sent", messageId: this.messageId, text: visible });
      return true;
    }
    const earlier = (await readLedger(this.deps.db, this.runId))?.parts["0"];
    if (earlier?.state !== "sent" || !earlier.messageId) {
      this.disabled = true;
      return false;
    }
    this.messageId = earlier.messageId;
    this.shown = earlier.text ?? "";
    return true;
  }
}
