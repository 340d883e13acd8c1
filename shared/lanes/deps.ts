import type { RunDeps } from "../ports/run-deps";

/**
 * What the lane code needs. `pusher` and `log` are optional: the hand-off at
 * a run's end (run-finalize, sweeper: functions allowed to post to
 * connections) uses them to give the WebSocket requesters of messages folded
 * into the run their final answer; elsewhere the answer is only written to
 * the messages' records (agent.wait and REST read it there).
 */
export type LaneDeps = Pick<RunDeps, "db" | "executions" | "config"> & Partial<Pick<RunDeps, "pusher" | "log">>;

/** Cap of the global lane from the configuration; 0 = no global lane. */
export function globalCap(deps: LaneDeps): number {
  return deps.config.lanes.globalCap;
}
