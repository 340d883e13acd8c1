import { ApiError } from "../protocol/errors";
import type { AcceptedRun } from "./intake";

/**
 * How REST and WebSocket tell a caller what happened to its message (the
 * same fields on both): where it waits, which run took it, which run it
 * interrupted. Absent fields mean "not applicable".
 */
export function queuePlacement(accepted: AcceptedRun): Record<string, unknown> {
  return {
    queueMode: accepted.queueMode,
    ...(accepted.seq !== undefined ? { seq: accepted.seq } : {}),
    ...(accepted.position !== undefined ? { position: accepted.position } : {}),
    ...(accepted.intoRunId ? { intoRunId: accepted.intoRunId } : {}),
    ...(accepted.interruptedRunId ? { interruptedRunId: accepted.interruptedRunId } : {}),
    ...(accepted.activeRunId ? { activeRunId: accepted.activeRunId } : {}),
  };
}

/** A refused message: `SESSION_BUSY` (HTTP 429) with the reason, nothing was stored or run. */
export function sessionBusy(accepted: AcceptedRun): ApiError {
  const message =
    accepted.reason === "queue_full"
      ? `session ${accepted.sessionKey} is busy and its queue is full; the message was not accepted`
      : `session ${accepted.sessionKey} is busy; the message was not accepted (queue mode ${accepted.queueMode})`;
  return new ApiError("SESSION_BUSY", message, {
    sessionKey: accepted.sessionKey,
    reason: accepted.reason ?? "busy",
    queueMode: accepted.queueMode,
    ...(accepted.activeRunId ? { activeRunId: accepted.activeRunId } : {}),
  });
}
