import type { RunDeps } from "../ports/run-deps";
import { RunEventEmitter } from "./emitter";

/**
 * Typed builders for every event's `data`, and `openRunEvents` for code that
 * emits outside an attempt (compaction, abort, finalize). The field names are
 * OpenClaw's (reference section L); docs/protocol.md lists them.
 */

/** Args larger than this are replaced by a capped JSON preview (event items stay well under 400 KB). */
const EVENT_TOOL_ARGS_BYTES = 300_000;

export const lifecycleEvent = {
  start: (startedAt: number, model?: string) => ({ phase: "start", startedAt, ...(model ? { model } : {}) }),
  /** The run ended well: its reply payloads and diagnostics. */
  end: (data: { startedAt?: number; endedAt: number; payloads: unknown[]; meta: Record<string, unknown>; aborted?: boolean }) => ({
    phase: "end",
    livenessState: "working",
    aborted: data.aborted ?? false,
    ...data,
  }),
  /** The run failed, timed out or was aborted; `error` is user-facing (no stack, no provider internals). */
  error: (data: { startedAt?: number; endedAt: number; error: string; status: string }) => ({
    phase: "error",
    livenessState: data.status === "aborted" ? "abandoned" : "blocked",
    ...data,
  }),
};

export const toolEvent = {
  start: (name: string, toolCallId: string, args: Record<string, unknown>) => ({ phase: "start", name, toolCallId, args: capArgs(args) }),
  update: (name: string, toolCallId: string, partialResult: string) => ({ phase: "update", name, toolCallId, partialResult }),
  result: (name: string, toolCallId: string, isError: boolean, result: string) => ({ phase: "result", name, toolCallId, isError, result }),
};

/** Compaction: `start`, then `end` with `willRetry` (the attempt runs again on the compacted transcript) and `completed`. */
export const compactionEvent = {
  start: (reason?: string) => ({ phase: "start", ...(reason ? { reason } : {}) }),
  end: (data: { willRetry: boolean; completed: boolean; tokensBefore?: number; tokensAfter?: number }) => ({ phase: "end", ...data }),
};

/** An emitter for a run, for code outside the attempt sink (a few events, no text stream). Call `flush()` before the task returns. */
export function openRunEvents(deps: Pick<RunDeps, "db" | "pusher" | "config" | "log">, runId: string, sessionKey: string): Promise<RunEventEmitter> {
  return RunEventEmitter.open({ db: deps.db, pusher: deps.pusher, retentionDays: deps.config.events.retentionDays, log: deps.log }, runId, sessionKey, { streamsText: false });
}

/** Emits compaction start/end around `work` (the compaction owner's seam); `end` is emitted even when work throws. */
export async function withCompactionEvents<T>(
  emitter: RunEventEmitter,
  work: () => Promise<T>,
  outcome: (result: T | undefined) => { willRetry: boolean; completed: boolean },
): Promise<T> {
  emitter.emit("compaction", compactionEvent.start());
  let result: T | undefined;
  try {
    result = await work();
    return result;
  } finally {
    emitter.emit("compaction", compactionEvent.end(outcome(result)));
    await emitter.flush();
  }
}

function capArgs(args: Record<string, unknown>): Record<string, unknown> {
  const json = JSON.stringify(args);
  if (Buffer.byteLength(json, "utf8") <= EVENT_TOOL_ARGS_BYTES) return args;
  return { truncated: true, json: json.slice(0, EVENT_TOOL_ARGS_BYTES / 4) };
}
