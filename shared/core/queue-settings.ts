import * as z from "zod";

/**
 * Queue modes (OpenClaw's auto-reply queue, seed 001 "Puesta en cola +
 * concurrencia", reference B.18-B.24): what happens to a message that arrives
 * while its session already has a run.
 *  - steer:     delivered to the running attempt at its next model call;
 *  - followup:  its own run after the current one;
 *  - collect:   queued messages coalesce into one follow-up run after a debounce;
 *  - interrupt: the running run is aborted at its next boundary, then this one runs;
 *  - reject:    answered "session busy" at once.
 */
export const QUEUE_MODES = ["steer", "followup", "collect", "interrupt", "reject"] as const;
export type QueueMode = (typeof QUEUE_MODES)[number];

/** Per-session cap overflow: drop the oldest (with or without a summary line) or refuse the newest. */
export const DROP_POLICIES = ["summarize", "old", "new"] as const;
export type DropPolicy = (typeof DROP_POLICIES)[number];

/** Longest collect debounce we accept (10 min); longer would be a schedule, not a debounce. */
export const MAX_DEBOUNCE_MS = 600_000;

/** Any subset of the settings: a request, a session or a channel may set some and inherit the rest. */
export const QueueOverridesSchema = z.lazy(() => z
  .object({
    mode: z.enum(QUEUE_MODES).optional(),
    debounceMs: z.number().int().min(0).max(MAX_DEBOUNCE_MS).optional(),
    /** Messages that may wait in the session lane (values < 1 are refused, as OpenClaw ignores them). */
    cap: z.number().int().min(1).max(1000).optional(),
    drop: z.enum(DROP_POLICIES).optional(),
  })
  .strict());
export type QueueOverrides = z.infer<typeof QueueOverridesSchema>;

export interface QueueSettings {
  mode: QueueMode;
  debounceMs: number;
  cap: number;
  drop: DropPolicy;
}

/**
 * Field by field, the first that sets it wins: the request, the session's
 * stored override, the channel's settings, then the configured default
 * (OpenClaw `resolveQueueSettings`: inline -> session -> byChannel -> default).
 */
export function resolveQueueSettings(
  defaults: QueueSettings,
  layers: { request?: QueueOverrides; session?: QueueOverrides; channel?: QueueOverrides },
): QueueSettings {
  const ordered = [layers.request, layers.session, layers.channel];
  const pick = <K extends keyof QueueSettings>(key: K): QueueSettings[K] => {
    for (const layer of ordered) {
      const value = layer?.[key];
      if (value !== undefined) return value as QueueSettings[K];
    }
    return defaults[key];
  };
  return { mode: pick("mode"), debounceMs: pick("debounceMs"), cap: pick("cap"), drop: pick("drop") };
}

/** What started a run; it decides the run's priority in both lanes. */
export const TRIGGERS = ["user", "manual", "webhook", "cron", "heartbeat", "memory", "overflow"] as const;
export type Trigger = (typeof TRIGGERS)[number];

/** Lane priorities: higher runs first, FIFO within one priority (OpenClaw `command-queue.ts`). */
export const PRIORITY = { interrupt: 2, foreground: 1, normal: 0, background: -1 } as const;

/** OpenClaw `resolveEmbeddedRunSessionQueuePriority`: user/manual foreground, housekeeping background. */
export function priorityOf(trigger: Trigger): number {
  if (trigger === "user" || trigger === "manual") return PRIORITY.foreground;
  if (trigger === "cron" || trigger === "heartbeat" || trigger === "memory" || trigger === "overflow") return PRIORITY.background;
  return PRIORITY.normal;
}
