import { getLane } from "../aws/lanes";
import { isStartable } from "../aws/lane-runs";
import { listRegisteredLanes, unregisterLane, type RegisteredLane } from "../aws/lane-registry";
import { slotHolders } from "../aws/global-lane";
import { lastEventAt, releaseExpiredWriter } from "../aws/lease-sweep";
import { getRun, isInFlight, requestAbort, TERMINAL_STATUSES, type RunRecord } from "../aws/runs";
import { getSession } from "../aws/sessions";
import { stalledAbortMs } from "../config/lanes-config";
import { isBusy } from "../core/lanes";
import { classifyRunning, shouldReport } from "../core/stuck";
import type { RunDeps } from "../ports/run-deps";
import { currentExecution, diedOfInfrastructure, endDeadRun, isClosed, redriveOrEnd } from "./dead-runs";
import { freeSlotsOfEndedRuns, pumpGlobalLane } from "../lanes/global";
import { pumpLane } from "../lanes/pump";
import { ABORT_DRAIN_MS, SWEEP_INTERVAL_MS } from "../lanes/sweep";
import { retryPendingNotices, type NoticeRetryReport } from "../channels/notice-retry";

export { ABORT_DRAIN_MS, SWEEP_INTERVAL_MS } from "../lanes/sweep";

export interface Diagnostic {
  kind: "session.long_running" | "session.stalled" | "session.stuck";
  sessionKey: string;
  runId?: string;
  detail: string;
}

export interface SweepReport {
  lanes: number;
  /** Lanes left for the next tick because this invocation was running out of time. */
  deferred: number;
  unregistered: number;
  pumped: string[];
  finalized: string[];
  aborted: string[];
  freedSlots: string[];
  releasedLeases: string[];
  diagnostics: Diagnostic[];
  /** Chat notices that failed inside a webhook request, tried again (shared/channels/notice-retry.ts). */
  notices?: NoticeRetryReport;
}

/** Lanes swept at once: a sweep of a large registry must fit one invocation even when each call is slow. */
export const SWEEP_LANE_CONCURRENCY = 8;

export interface SweepOptions {
  intervalMs?: number;
  /** True once the invocation must stop starting lanes (its remaining time); the rest wait for the next tick. */
  outOfTime?: () => boolean;
}

/**
 * One sweep: every lane that may be busy (the registry), then the global
 * lane. Repairs what the normal path (intake -> dispatcher -> run-finalize)
 * could not: a lane whose run ended without handing it on, a run whose
 * execution died or never started, a collect batch due later than a Lambda
 * would wait, a slot held by an ended run, an expired writer lease. Reports
 * stuck-session diagnostics and aborts runs stalled past the threshold.
 * Every action is one of the idempotent lane steps, so a sweep racing the
 * normal path changes nothing it should not.
 *
 * Lanes go least recently joined first (a lane the normal path is serving
 * was touched a moment ago; one it lost has been quiet), several at once,
 * and the sweep stops starting lanes when the invocation runs short of
 * time: under load a one-by-one sweep ran past its timeout every tick and
 * never reached the lanes at the end of the list.
 */
export async function sweep(deps: RunDeps, options: SweepOptions = {}): Promise<SweepReport> {
  const intervalMs = options.intervalMs ?? SWEEP_INTERVAL_MS;
  const report: SweepReport = { lanes: 0, deferred: 0, unregistered: 0, pumped: [], finalized: [], aborted: [], freedSlots: [], releasedLeases: [], diagnostics: [] };
  const lanes = (await listRegisteredLanes(deps.db)).sort((a, b) => a.touchedAt - b.touchedAt);
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let registered = lanes[next++]; registered; registered = lanes[next++]) {
      if (options.outOfTime?.()) {
        report.deferred += 1;
        continue;
      }
      report.lanes += 1;
      try {
        await sweepLane(deps, registered, report, intervalMs);
      } catch (error) {
        // One broken lane must not stop the sweep of the others.
        deps.log.error("sweep of a lane failed", { sessionKey: registered.sessionKey, error: String(error) });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(SWEEP_LANE_CONCURRENCY, lanes.length) }, worker));
  report.freedSlots = await freeSlotsOfEndedRuns(deps, await slotHolders(deps.db));
  await pumpGlobalLane(deps);
  report.notices = await retryPendingNotices({ db: deps.db, channels: deps.config.channels, log: deps.log, hooks: deps.hooks }, () => options.outOfTime?.() ?? false);
  for (const diagnostic of report.diagnostics) deps.log.warn(diagnostic.kind, { ...diagnostic });
  return report;
}

async function sweepLane(deps: RunDeps, registered: RegisteredLane, report: SweepReport, intervalMs: number): Promise<void> {
  const { sessionKey } = registered;
  await releaseLease(deps, sessionKey, report);
  const lane = await getLane(deps.db, sessionKey);
  if (!isBusy(lane) && lane.dropped.length === 0) {
    if (await unregisterLane(deps.db, registered)) report.unregistered += 1;
    return;
  }
  if (lane.activeRunId === undefined) {
    // Waiting work and nobody pumping (a lost dispatch, a collect batch due later than a Lambda waits).
    await pumpLane(deps, sessionKey, 0);
    report.pumped.push(sessionKey);
    return;
  }
  const run = await getRun(deps.db, lane.activeRunId);
  if (!run || TERMINAL_STATUSES.has(run.status) || (!isStartable(run) && !isInFlight(run.status))) {
    report.diagnostics.push({ kind: "session.stuck", sessionKey, runId: lane.activeRunId, detail: "the lane's run ended but the lane was not handed on" });
    await pumpLane(deps, sessionKey, 0);
    report.pumped.push(sessionKey);
    return;
  }
  const execution = await currentExecution(deps, run);
  if (execution !== "unknown" && run.status === "running" && diedOfInfrastructure(execution)) {
    report.diagnostics.push({ kind: "session.stuck", sessionKey, runId: run.runId, detail: `the run's execution ${execution ? `failed (${execution.error})` : "no longer exists"}` });
    if ((await redriveOrEnd(deps, run, execution)) === "ended") report.finalized.push(run.runId);
    return;
  }
  if (execution !== "unknown" && execution && isClosed(execution.status)) {
    report.diagnostics.push({ kind: "session.stuck", sessionKey, runId: run.runId, detail: `the run's execution ended (${execution.status}) without finalizing it` });
    await endDeadRun(deps, run, execution);
    report.finalized.push(run.runId);
    return;
  }
  if (isStartable(run)) {
    // Not started yet: make sure it is (or waits for a global slot).
    await pumpLane(deps, sessionKey, 0);
    return;
  }
  // Waiting for an approval or a client tool is not a stall: no code runs, the deadline is the state machine's.
  if (run.status === "paused") return;
  await diagnoseRunning(deps, run, sessionKey, report, intervalMs);
}

async function diagnoseRunning(deps: RunDeps, run: RunRecord, sessionKey: string, report: SweepReport, intervalMs: number): Promise<void> {
  const now = deps.db.now();
  const startedAt = run.startedAt ?? run.acceptedAt;
  // Progress: the newest event, or the attempt's heartbeat (long silent tool calls and slow models).
  const lastProgressAt = Math.max(startedAt, run.heartbeatAt ?? 0, (await lastEventAt(deps.db, run.runId)) ?? 0);
  const warnMs = deps.config.diagnostics.stuckSessionWarnMs;
  const abortMs = stalledAbortMs(deps.config.diagnostics);
  const verdict = classifyRunning({ now, startedAt, lastProgressAt, warnMs, abortMs, abortRequested: run.abortRequestedAt !== undefined });
  if (verdict.kind === "ok") return;
  if (verdict.kind === "session.long_running") {
    if (shouldReport(verdict.ageMs, warnMs, intervalMs)) {
      report.diagnostics.push({ kind: verdict.kind, sessionKey, runId: run.runId, detail: `running for ${Math.round(verdict.ageMs / 1000)} s, still making progress` });
    }
    return;
  }
  const idle = `no progress for ${Math.round(verdict.idleMs / 1000)} s`;
  if (verdict.abort) {
    await requestAbort(deps.db, run.runId, `stalled: ${idle}`);
    report.aborted.push(run.runId);
    report.diagnostics.push({ kind: "session.stalled", sessionKey, runId: run.runId, detail: `${idle}; abort requested` });
    return;
  }
  if (run.abortRequestedAt !== undefined && now - run.abortRequestedAt >= ABORT_DRAIN_MS && verdict.idleMs >= abortMs) {
    // Asked to stop and still silent: nothing of it is alive to stop itself. End it so the lane moves on.
    await endDeadRun(deps, run, { status: "ABORTED", error: "SessionStalled", cause: idle });
    report.finalized.push(run.runId);
    report.diagnostics.push({ kind: "session.stalled", sessionKey, runId: run.runId, detail: `${idle}; ended after an abort it did not honour` });
    return;
  }
  if (shouldReport(verdict.idleMs, warnMs, intervalMs)) report.diagnostics.push({ kind: "session.stalled", sessionKey, runId: run.runId, detail: idle });
}

async function releaseLease(deps: RunDeps, sessionKey: string, report: SweepReport): Promise<void> {
  const session = await getSession(deps.db, sessionKey);
  if (!session) return;
  const holder = await releaseExpiredWriter(deps.db, session.sessionId);
  if (holder) report.releasedLeases.push(holder);
}
