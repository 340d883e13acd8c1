import * as z from "zod";
import { DROP_POLICIES, QUEUE_MODES, QueueOverridesSchema, MAX_DEBOUNCE_MS } from "../core/queue-settings";

/**
 * Lanes and queue modes (issue 6; OpenClaw `messages.queue.*` and the main
 * lane's `maxConcurrent`). Defaults are OpenClaw's current ones: mode steer,
 * debounce 500 ms, cap 20, drop summarize.
 */
export const LanesConfigSchema = z
  .object({
    /** What a message does when its session already has a run. */
    mode: z.enum(QUEUE_MODES).default("steer"),
    /** collect: how long the queued batch must be quiet before it runs. */
    debounceMs: z.number().int().min(0).max(MAX_DEBOUNCE_MS).default(500),
    /** Messages that may wait per session. */
    cap: z.number().int().min(1).max(1000).default(20),
    /** The highest cap a request (or a session's stored override) may set: callers cannot raise it past this. */
    maxCap: z.number().int().min(1).max(1000).default(100),
    /** When the cap is reached: drop the oldest with a summary line, drop it silently, or refuse the newest. */
    drop: z.enum(DROP_POLICIES).default("summarize"),
    /** Per channel (the request's `channel`): any of the four settings above. */
    byChannel: z.record(z.string().min(1), QueueOverridesSchema).default({}),
    /** Runs executing at once across all sessions (the global lane); 0 = no global lane. */
    globalCap: z.number().int().min(0).max(10_000).default(16),
  })
  .strict();
export type LanesConfig = z.infer<typeof LanesConfigSchema>;

/**
 * Stuck-session diagnostics (OpenClaw `diagnostics.stuckSessionWarnMs`,
 * reference section O): a run without progress for `stuckSessionWarnMs` is
 * reported; one without progress for the abort threshold (default
 * max(5 min, 3 x warn)) is aborted so its lane moves on.
 */
export const DiagnosticsConfigSchema = z
  .object({
    stuckSessionWarnMs: z.number().int().min(1000).max(86_400_000).default(120_000),
    stuckSessionAbortMs: z.number().int().min(1000).optional(),
  })
  .strict();
export type DiagnosticsConfig = z.infer<typeof DiagnosticsConfigSchema>;

export const MIN_STALLED_ABORT_MS = 300_000;

/**
 * How often a running attempt heartbeats its run: four beats per warn
 * threshold, so one late beat never makes live work look stalled; at most a
 * minute apart (1 WRU each) and at least 250 ms.
 */
export function heartbeatIntervalMs(config: DiagnosticsConfig): number {
  return Math.min(60_000, Math.max(250, Math.floor(config.stuckSessionWarnMs / 4)));
}

export function stalledAbortMs(config: DiagnosticsConfig): number {
  return config.stuckSessionAbortMs ?? Math.max(MIN_STALLED_ABORT_MS, 3 * config.stuckSessionWarnMs);
}
