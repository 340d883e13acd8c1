import { getRun, TERMINAL_STATUSES, type RunRecord } from "../aws/runs";
import type { LaneDeps } from "./deps";
import type { LaneState } from "../core/lanes";
import { releaseGlobalSlot } from "./global";
import { MAX_INLINE_WAIT_MS, pumpLane, type PumpResult } from "./pump";
import { settleMerged } from "./settle";

/**
 * The end of a run hands its lanes on, from the Lambda that ended it
 * (run-finalize, or the sweeper for a run whose execution died): the
 * messages folded into it end with it, its global slot goes to the next run
 * waiting for one, and its session lane to the next waiting message. Safe to
 * call twice; a run that has not ended changes nothing.
 */
export async function handOffLane(deps: LaneDeps, runId: string, known?: RunRecord, seenLane?: LaneState): Promise<PumpResult | undefined> {
  // `known`: the ended record the caller just wrote, no second read. `seenLane`: the session lane as the
  // caller last read it (the pump's first write is conditional on its version: a stale one costs a read).
  const run = known ?? await getRun(deps.db, runId);
  if (!run || !TERMINAL_STATUSES.has(run.status)) return undefined;
  await settleMerged(deps, run, [], true);
  await releaseGlobalSlot(deps, runId);
  return pumpLane(deps, run.sessionKey, MAX_INLINE_WAIT_MS, run, seenLane);
}
