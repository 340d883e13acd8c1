import { appendTurn, claimWriter, releaseWriter } from "../aws/transcript";
import { getRun, markRunning, recordUserEntry, TERMINAL_STATUSES, type RunRecord } from "../aws/runs";
import { RunNotFoundError } from "../aws/errors";
import { touchSession } from "../aws/sessions";
import { initialLoopState } from "../core/run-loop";
import { modelChain } from "../providers/registry";
import { RunEventEmitter } from "../events/emitter";
import type { RunDeps } from "./deps";
import type { LoopPointer } from "./pointer";

/** Lease for short steps that only append a message. */
const SHORT_LEASE_MS = 60_000;

/**
 * First task of a run: mark it running, persist the user's message under the
 * session write claim, announce `lifecycle start`. Idempotent, because Step
 * Functions may run a task twice: the message is appended once (the last
 * committed entry tells) and `start` is emitted only into an empty event log.
 */
export async function startRun(deps: RunDeps, runId: string): Promise<LoopPointer> {
  const run = await getRun(deps.db, runId);
  if (!run) throw new RunNotFoundError(runId);
  const loop = initialLoopState(modelChain(deps.config, run.model).length);
  if (TERMINAL_STATUSES.has(run.status)) return { runId, loop };

  const startedAt = deps.db.now();
  await markRunning(deps.db, runId, startedAt);
  if (run.userEntrySeq === undefined) await persistUserMessage(deps, run);
  await touchSession(deps.db, run.sessionKey, runId);

  const emitter = await RunEventEmitter.open(emitterDeps(deps), runId, run.sessionKey);
  if (emitter.lastSeq === 0) {
    emitter.emit("lifecycle", { phase: "start", startedAt: run.startedAt ?? startedAt, model: run.model });
  }
  await emitter.flush();
  return { runId, loop };
}

async function persistUserMessage(deps: RunDeps, run: RunRecord): Promise<void> {
  const claim = await claimWriter(deps.db, run.sessionId, run.runId, {
    leaseMs: SHORT_LEASE_MS,
    acquireTimeoutMs: deps.config.session.writeLockAcquireTimeoutMs,
    allowReentrant: true,
  });
  try {
    const alreadyAppended = claim.lastRunId === run.runId && claim.lastMessage?.role === "user";
    const committed = alreadyAppended ? claim : await appendTurn(deps.db, claim, [{ role: "user", content: run.message }]);
    await recordUserEntry(deps.db, run.runId, committed.nextSeq - 1);
  } finally {
    await releaseWriter(deps.db, claim);
  }
}

export function emitterDeps(deps: RunDeps) {
  return { db: deps.db, pusher: deps.pusher, retentionDays: deps.config.events.retentionDays, log: deps.log };
}
