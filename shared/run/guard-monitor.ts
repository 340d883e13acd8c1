import type { AttemptSink } from "../agent/attempt";
import type { ToolCallBlock, ToolResultMessage } from "../core/messages";
import { observeToolOutcome } from "../core/loop-guard";
import type { PostCompactionGuard } from "../core/run-loop";

/**
 * Runs the post-compaction loop guard (core/loop-guard) over the tool
 * outcomes of one attempt, seen through its event sink, and aborts the
 * attempt the moment the same call repeats with the same result. The guard's
 * state carries over to the next attempt through the loop state.
 */
export class GuardMonitor {
  private readonly controller = new AbortController();
  private state: PostCompactionGuard | undefined;
  private trip: { toolName: string; repeats: number } | undefined;

  constructor(armed: PostCompactionGuard | undefined) {
    this.state = armed;
  }

  /** Aborted when the guard trips. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get tripped(): { toolName: string; repeats: number } | undefined {
    return this.trip;
  }

  /** What the next attempt inherits (undefined once the window is used up). */
  get guard(): PostCompactionGuard | undefined {
    return this.state;
  }

  /** The same sink, with every tool result also shown to the guard. */
  wrap<S extends AttemptSink>(sink: S): S {
    if (!this.state) return sink;
    const wrapped = Object.create(sink) as S;
    wrapped.toolResult = (call: ToolCallBlock, result: ToolResultMessage) => {
      sink.toolResult(call, result);
      this.observe(call, result);
    };
    return wrapped;
  }

  observe(call: ToolCallBlock, result: ToolResultMessage): void {
    if (this.trip) return;
    const verdict = observeToolOutcome(this.state, { toolName: call.name, args: call.args, result: result.content });
    this.state = verdict.guard;
    if (verdict.abort) {
      this.trip = { toolName: verdict.toolName, repeats: verdict.repeats };
      this.controller.abort("compaction_loop_persisted");
    }
  }
}
