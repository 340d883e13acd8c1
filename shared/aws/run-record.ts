import * as z from "zod";
import { isExpired } from "./dynamo";
import { QUEUE_MODES } from "../core/queue-settings";
import { ChannelTargetSchema } from "../core/channel-target";

/**
 * The run record's persisted shape (v1): statuses, the stored result, the
 * schema and its parse. The writes that move a run through it are in
 * ./runs.ts, which re-exports all of this.
 */

/**
 * `steered` / `collected`: the message was folded into another run (`mergedInto`)
 * by its session lane; it ends when that run ends (shared/lanes/handoff.ts).
 */
export const RUN_STATUSES = ["accepted", "queued", "running", "paused", "steered", "collected", "ok", "error", "timeout", "aborted"] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
export const TERMINAL_STATUSES: ReadonlySet<RunStatus> = new Set(["ok", "error", "timeout", "aborted"]);

/**
 * Started and not ended: `running`, or `paused` (waiting for an approval or a
 * client tool's result with no code running; the sweeper never aborts it).
 */
export function isInFlight(status: RunStatus): boolean {
  return status === "running" || status === "paused";
}

// `toolSummary`: the inline tool summary of a verbose chat conversation (shared/core/reply.ts).
const PayloadSchema = z.lazy(() => z.object({ text: z.string(), isError: z.boolean().optional(), toolSummary: z.boolean().optional() }));

export const RunResultSchema = z.lazy(() => z.object({
  payloads: z.array(PayloadSchema),
  meta: z.record(z.string(), z.unknown()),
}));
export type RunResult = z.infer<typeof RunResultSchema>;

/** Run record, schema version 1. Parsed on every read. */
export const RunRecordSchema = z.lazy(() => z.object({
  v: z.literal(1),
  runId: z.string(),
  /** The tenant of the key that created the run (absent on older runs: the default tenant). */
  tenantId: z.string().optional(),
  sessionKey: z.string(),
  sessionId: z.string(),
  message: z.string(),
  idempotencyKey: z.string().optional(),
  /** Hash of the accepted request; a reused idempotency key with another request is a conflict. */
  requestHash: z.string(),
  source: z.enum(["rest", "ws", "webhook"]),
  status: z.enum(RUN_STATUSES),
  model: z.string(),
  /** Version of the deployed configuration the run was accepted under; every task of the run uses it. */
  configVersion: z.string().optional(),
  /** Whole-run budget in ms (0 = unlimited). */
  timeoutMs: z.number().int().min(0),
  acceptedAt: z.number(),
  /** The message's place in its session's acceptance order (the lane's sequence); the lane starts runs in this order. */
  seq: z.number().int().positive().optional(),
  enqueuedAt: z.number().optional(),
  startedAt: z.number().optional(),
  /** Last sign of life of a running attempt (shared/run/heartbeat.ts): long silent work is not a stall. */
  heartbeatAt: z.number().optional(),
  endedAt: z.number().optional(),
  error: z.string().optional(),
  executionArn: z.string().optional(),
  /** Re-drives so far, set before each starts: an older attempt still running stops (run-watch.ts "superseded"). */
  redriveGeneration: z.number().int().optional(),
  userEntrySeq: z.number().int().optional(),
  /**
   * The intake created the session for this run, with this run as its
   * `lastRunId`: the run's start reads the session instead of touching it
   * (shared/run/start-run.ts), unless another run touched it since.
   */
  openedSession: z.literal(true).optional(),
  /**
   * When a tool turn of this run was first saved as pending (shared/aws/tool-ledger.ts):
   * set before the save, so a run without it has nothing to resume and its attempts skip that read.
   */
  pendingTurnAt: z.number().optional(),
  result: RunResultSchema.optional(),
  /** Set by an abort request (runs.abort, interrupt mode); attempts stop at their next boundary. */
  abortRequestedAt: z.number().optional(),
  abortReason: z.string().optional(),
  /**
   * The WebSocket request that started the run (`agent` over WS): whoever ends
   * the run posts the final `res` for `requestId` to `connectionId`.
   * `frameChunks`: that client reassembles `chunk` events.
   */
  requester: z.object({ connectionId: z.string(), requestId: z.string(), frameChunks: z.boolean().optional() }).optional(),
  /** Per-run overrides from the request (OpenClaw `agent` params). */
  thinking: z.string().optional(),
  extraSystemPrompt: z.string().optional(),
  /** Tools the caller runs itself (docs/client-tools.md); a call pauses the run for the client's result. */
  clientTools: z.array(z.object({ name: z.string(), description: z.string(), parameters: z.record(z.string(), z.unknown()) })).optional(),
  clientToolTimeoutSeconds: z.number().int().positive().optional(),
  /** The caller asked for the `thinking` event stream. */
  streamThinking: z.boolean().optional(),
  /** How the message waits in its session lane (shared/core/lanes.ts); absent on records older than lanes. */
  lane: z
    .object({
      kind: z.enum(["run", "steer", "collect"]),
      priority: z.number().int(),
      mode: z.enum(QUEUE_MODES),
      debounceMs: z.number().int().min(0).optional(),
    })
    .optional(),
  /** steered / collected: the run that carries this message. */
  mergedInto: z.string().optional(),
  /** The caller's own text, kept when the lane rewrote `message` (collect batch, dropped-message notes). */
  ownMessage: z.string().optional(),
  /** Collect: the messages folded into this run, in lane order. */
  batch: z.array(z.string()).optional(),
  /** Steer: the messages this run took at its model calls. */
  steeredIds: z.array(z.string()).optional(),
  /** A channel message (Telegram, Slack, signed hook): where its reply is delivered (shared/channels/deliver.ts). */
  channelTarget: ChannelTargetSchema.optional(),
  expiresAt: z.number().optional(),
  /**
   * When the requester's final `res` was posted, on records written before the REPLIED marker item
   * (shared/aws/runs.ts markFinalReplied) took it over; still read, never written.
   */
  finalRepliedAt: z.number().optional(),
}));
export type RunRecord = z.infer<typeof RunRecordSchema>;

export function parseRun(item: Record<string, unknown> | undefined, nowMs = Date.now()): RunRecord | undefined {
  // Past its TTL the record is gone (AWS deletes it late; the local emulator never does).
  if (!item || isExpired(item as { expiresAt?: number }, nowMs)) return undefined;
  const { pk: _pk, sk: _sk, ...rest } = item;
  return RunRecordSchema.parse(rest);
}
