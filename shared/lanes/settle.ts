import { endMerged, revertUndeliveredSteer } from "../aws/lane-runs";
import { getRun, TERMINAL_STATUSES, type RunRecord } from "../aws/runs";
import { replyToRequester } from "../events/final-response";
import type { LaneDeps } from "./deps";

/**
 * A run ended: the messages folded into it end with it (same status), so
 * their callers' `agent.wait` and WebSocket requests get an answer too. A
 * steered message the run claimed but never wrote into the transcript (it
 * ended first, or crashed in between) goes back to waiting and runs as a
 * follow-up. Idempotent: every write is conditional on the folded state.
 */
export async function settleMerged(
  deps: LaneDeps,
  carrier: RunRecord,
  extraIds: readonly string[] = [],
  /** Post each WebSocket requester its final answer: only from functions that may (run-finalize, sweeper). */
  reply = false,
): Promise<void> {
  if (!TERMINAL_STATUSES.has(carrier.status)) return;
  const ids = new Set([...(carrier.batch ?? []), ...(carrier.steeredIds ?? []), ...extraIds]);
  for (const id of ids) {
    const message = await getRun(deps.db, id);
    if (!message || message.mergedInto !== carrier.runId) continue;
    if (message.status === "steered" && message.userEntrySeq === undefined) {
      await revertUndeliveredSteer(deps.db, id, carrier.runId);
      continue;
    }
    if ((message.status === "steered" || message.status === "collected") && (await endMerged(deps.db, id, carrier))) {
      if (reply && deps.pusher && deps.log) await replyToRequester({ db: deps.db, pusher: deps.pusher, log: deps.log }, id);
    }
  }
}
