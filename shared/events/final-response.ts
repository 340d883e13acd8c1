import { removeConnection } from "../aws/connections";
import { getRun, markFinalReplied, TERMINAL_STATUSES, type RunRecord } from "../aws/runs";
import { deliverFrame } from "./delivery";
import { finalResponseFrame } from "../protocol/agent-final";
import { MAX_FRAME_BYTES } from "../protocol/limits";
import type { RunDeps } from "../ports/run-deps";

/**
 * Posts the final `res` of the WebSocket `agent` request that started the
 * run to that connection only (OpenClaw's client finishes a turn on this
 * frame, never on events). Called by whatever ends the run: run-finalize, or
 * an abort of a run that never started. A client that is gone by now
 * reconnects and re-sends its request; the duplicate gets this same frame.
 */
export async function replyToRequester(deps: Pick<RunDeps, "db" | "pusher" | "log">, runId: string, known?: RunRecord): Promise<void> {
  // `known`: the record the caller just wrote (the terminal write's ALL_NEW), no second read.
  const run = known ?? await getRun(deps.db, runId);
  if (!run?.requester || !TERMINAL_STATUSES.has(run.status)) return;
  const { connectionId, requestId, frameChunks } = run.requester;
  const frame = finalResponseFrame(requestId, run, frameChunks ? undefined : MAX_FRAME_BYTES);
  try {
    if ((await deliverFrame(deps.pusher, connectionId, frame)) === "gone") await removeConnection(deps.db, connectionId);
    await markFinalReplied(deps.db, runId, run.expiresAt);
  } catch (error) {
    // Never fails the run: the answer stays available to a repeated request and over REST.
    deps.log.warn("final response delivery failed", { runId, connectionId, error: String(error) });
  }
}
