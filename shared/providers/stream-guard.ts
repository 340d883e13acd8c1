/**
 * The part every provider adapter shares: turning an SDK stream, which can
 * throw, hang or end silently, into our contract (never throws, always ends
 * with exactly one `end` or `error`).
 *
 * An adapter supplies `run`, an async generator that yields content events and
 * returns how the response ended. The guard owns the abort controller (caller
 * signal + idle watchdog), the assistant message being built, and the one place
 * where thrown errors are classified.
 */
import type { AssistantBlock, AssistantMessage, StopReason, ToolCallBlock, Usage } from "../core/messages";
import { ZERO_USAGE } from "../core/messages";
import type { ProviderFailure } from "../core/failures";
import type { ModelRequest, ProviderEvent } from "./types";
import { abortedFailure, idleTimeoutFailure } from "./classify";

export type ContentEvent = Extract<ProviderEvent, { type: "text-delta" | "thinking-delta" | "tool-call" }>;

/** How the provider said the response ended (or why it failed in-band). */
export type StreamOutcome =
  | { type: "end"; stopReason: StopReason; rawStopReason?: string }
  | { type: "error"; failure: ProviderFailure };

export interface StreamIO {
  /** Pass to the SDK call: aborted on caller abort and on idle timeout. */
  readonly signal: AbortSignal;
  /** The message under construction; adapters set usage and signatures on it. */
  readonly message: MessageBuilder;
  /**
   * Opens the SDK stream and iterates it under the idle watchdog. The clock
   * only runs while we wait on the network, never while our consumer is busy.
   */
  watch<T>(open: () => PromiseLike<AsyncIterable<T>>): AsyncGenerator<T>;
}

export interface GuardOptions {
  provider: string;
  model: string;
  request: Pick<ModelRequest, "signal" | "idleTimeoutMs">;
  /** Classifies anything the SDK throws; called at most once per stream. */
  classify: (error: unknown, responseStarted: boolean) => ProviderFailure;
  run: (io: StreamIO) => AsyncGenerator<ContentEvent, StreamOutcome>;
}

/** Accumulates the assistant message from content events, in arrival order. */
export class MessageBuilder {
  usage: Usage = { ...ZERO_USAGE };
  private readonly blocks: AssistantBlock[] = [];
  private sealed = true;

  constructor(
    readonly provider: string,
    readonly model: string,
  ) {}

  /** True once any content reached our consumer: the `responseStarted` fact. */
  get started(): boolean {
    return this.blocks.length > 0;
  }

  apply(event: ContentEvent): void {
    if (event.type === "tool-call") {
      this.blocks.push({ type: "tool_call", id: event.id, name: event.name, args: event.args });
      this.sealed = true;
      return;
    }
    const type = event.type === "text-delta" ? "text" : "thinking";
    const last = this.blocks[this.blocks.length - 1];
    if (!this.sealed && last?.type === type) {
      last.text += event.text;
    } else {
      this.blocks.push({ type, text: event.text });
    }
    this.sealed = false;
  }

  /** Providers with explicit block boundaries (Anthropic) keep blocks apart. */
  breakBlock(): void {
    this.sealed = true;
  }

  /** Anthropic sends the signature after the thinking text of the same block. */
  signThinking(signature: string): void {
    const last = this.blocks[this.blocks.length - 1];
    if (!this.sealed && last?.type === "thinking") {
      last.signature = (last.signature ?? "") + signature;
    } else {
      // Thinking with display omitted: a signature with no text still has to be replayed.
      this.blocks.push({ type: "thinking", text: "", signature });
    }
  }

  build(stopReason: StopReason, rawStopReason?: string): AssistantMessage {
    const message: AssistantMessage = {
      role: "assistant",
      content: this.blocks.map((block) => ({ ...block })),
      provider: this.provider,
      model: this.model,
      stopReason,
      usage: { ...this.usage },
    };
    if (rawStopReason !== undefined) message.rawStopReason = rawStopReason;
    return message;
  }
}

/**
 * Parses streamed tool-call arguments without ever throwing. Models do emit
 * broken JSON (truncated at max_tokens, or small local models); the raw text
 * is kept under `_raw` so the tool can report a useful error to the model.
 */
export function parseToolArguments(raw: string): Record<string, unknown> {
  if (raw.trim() === "") return {}; // no-argument tools stream nothing at all
  try {
    const parsed: unknown = JSON.parse(raw);
    if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)) {
      return parsed as Record<string, unknown>;
    }
  } catch {
    // fall through: malformed JSON is kept verbatim below
  }
  return { _raw: raw };
}

export function toolCallEvent(block: Omit<ToolCallBlock, "type">): ContentEvent {
  return { type: "tool-call", id: block.id, name: block.name, args: block.args };
}

type AbortCause = "aborted" | "timeout";
const ABORTED: unique symbol = Symbol("aborted");

/** Links the caller's signal and the idle watchdog to one controller. */
class Attempt {
  readonly controller = new AbortController();
  cause: AbortCause | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly onCallerAbort = () => this.abort("aborted");

  constructor(
    private readonly callerSignal: AbortSignal | undefined,
    private readonly idleTimeoutMs: number | undefined,
  ) {
    callerSignal?.addEventListener("abort", this.onCallerAbort, { once: true });
  }

  abort(cause: AbortCause): void {
    if (this.cause) return;
    this.cause = cause;
    this.controller.abort(cause);
  }

  arm(): void {
    if (!this.idleTimeoutMs || this.idleTimeoutMs <= 0) return;
    this.disarm();
    this.timer = setTimeout(() => this.abort("timeout"), this.idleTimeoutMs);
  }

  disarm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  dispose(): void {
    this.disarm();
    this.callerSignal?.removeEventListener("abort", this.onCallerAbort);
    // Consumer stopped early or we finished: make sure no request is left running.
    if (!this.controller.signal.aborted) this.controller.abort("done");
  }

  /** Resolves (never rejects) when the attempt is aborted, for racing hung reads. */
  readonly aborted: Promise<typeof ABORTED> = new Promise((resolve) => {
    this.controller.signal.addEventListener("abort", () => resolve(ABORTED), { once: true });
  });
}

/** Thrown inside the guard only, so a hung SDK read cannot outlive an abort. */
class AttemptAbortedSignal extends Error {
  override name = "AttemptAbortedSignal";
}

function createIO(attempt: Attempt, message: MessageBuilder): StreamIO {
  async function* watch<T>(open: () => PromiseLike<AsyncIterable<T>>): AsyncGenerator<T> {
    attempt.arm();
    let iterator: AsyncIterator<T> | undefined;
    try {
      const source = await raceAbort(attempt, Promise.resolve(open()));
      iterator = source[Symbol.asyncIterator]();
      for (;;) {
        attempt.arm();
        const next = await raceAbort(attempt, iterator.next());
        attempt.disarm();
        if (next.done) return;
        yield next.value;
      }
    } finally {
      attempt.disarm();
      // Not awaited: returning an async generator waits for its pending next(),
      // which may be the very read that hung.
      void iterator?.return?.()?.catch?.(() => undefined);
    }
  }
  return { signal: attempt.controller.signal, message, watch };
}

async function raceAbort<T>(attempt: Attempt, work: Promise<T>): Promise<T> {
  work.catch(() => undefined); // the loser of the race must not become an unhandled rejection
  const winner = await Promise.race([work, attempt.aborted]);
  if (winner === ABORTED) throw new AttemptAbortedSignal(attempt.cause ?? "aborted");
  return winner;
}

function failureFor(attempt: Attempt, opts: GuardOptions, error: unknown, started: boolean): ProviderFailure {
  if (attempt.cause === "aborted") return abortedFailure(started);
  if (attempt.cause === "timeout") return idleTimeoutFailure(opts.request.idleTimeoutMs ?? 0, started);
  try {
    return opts.classify(error, started);
  } catch (classifyError) {
    // A classifier bug must not break the never-throws contract.
    return { kind: "unknown", message: String(classifyError), retryable: true, responseStarted: started };
  }
}

function errorEvent(message: MessageBuilder, failure: ProviderFailure): ProviderEvent {
  const stopReason: StopReason = failure.kind === "aborted" ? "aborted" : "error";
  return { type: "error", failure, partial: message.build(stopReason) };
}

/** Runs an adapter's stream under the contract described at the top of this file. */
export async function* guardedStream(opts: GuardOptions): AsyncGenerator<ProviderEvent> {
  const message = new MessageBuilder(opts.provider, opts.model);
  if (opts.request.signal?.aborted) {
    yield errorEvent(message, abortedFailure(false));
    return;
  }
  const attempt = new Attempt(opts.request.signal, opts.request.idleTimeoutMs);
  let body: AsyncGenerator<ContentEvent, StreamOutcome> | undefined;
  let terminal: ProviderEvent;
  try {
    body = opts.run(createIO(attempt, message));
    let step = await body.next();
    while (!step.done) {
      message.apply(step.value);
      yield step.value;
      step = await body.next();
    }
    terminal = terminalFor(attempt, opts, message, step.value);
  } catch (error) {
    terminal = errorEvent(message, failureFor(attempt, opts, error, message.started));
  } finally {
    attempt.dispose();
    // When our consumer stops early, let the adapter's generator unwind too.
    await body?.return(undefined as never).catch(() => undefined);
  }
  yield terminal;
}

function terminalFor(
  attempt: Attempt,
  opts: GuardOptions,
  message: MessageBuilder,
  outcome: StreamOutcome,
): ProviderEvent {
  // The SDKs end their iterator silently when aborted mid-body; the cause tells us why.
  if (attempt.cause) return errorEvent(message, failureFor(attempt, opts, undefined, message.started));
  if (outcome.type === "error") return errorEvent(message, outcome.failure);
  const final = message.build(outcome.stopReason, outcome.rawStopReason);
  return { type: "end", message: final, stopReason: outcome.stopReason, usage: final.usage };
}
