import type { RunRecord } from "../../shared/aws/runs";

/** An ended webhook run as run-finalize leaves it, for delivery tests: answer `text`, reply to `channelTarget`. */
export function endedChannelRun(runId: string, sessionKey: string, text: string, channelTarget: RunRecord["channelTarget"]): RunRecord {
  return {
    v: 1,
    runId,
    sessionKey,
    sessionId: "sess",
    message: "hi",
    requestHash: "h",
    source: "webhook",
    status: "ok",
    model: "offline/echo",
    timeoutMs: 0,
    acceptedAt: 1,
    endedAt: 2,
    result: { payloads: [{ text }], meta: {} },
    channelTarget,
  };
}
