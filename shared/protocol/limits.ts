/**
 * What the server promises about sizes and timing, announced in `hello-ok`.
 * API Gateway's WebSocket quotas decide them: a frame is at most 32 KB and a
 * message (one PostToConnection) at most 128 KB. We never post more than one
 * frame's worth: anything larger is split into `chunk` events (see chunks.ts).
 */
export const MAX_FRAME_BYTES = 32 * 1024;
export const MAX_MESSAGE_BYTES = 128 * 1024;

/**
 * We send no `tick` events (a Lambda cannot keep a timer between
 * invocations); the interval we announce is API Gateway's idle timeout, the
 * longest silence a client can see before the connection closes anyway.
 * OpenClaw's client only arms its tick watchdog while no request is pending.
 */
export const TICK_INTERVAL_MS = 10 * 60 * 1000;

/** A client capability (`connect.params.caps`): it reassembles `chunk` events, so even final answers may be split. */
export const CAP_FRAME_CHUNKS = "frame-chunks";

/** The one agent this backend runs (OpenClaw's default agent id). */
export const DEFAULT_AGENT_ID = "main";
