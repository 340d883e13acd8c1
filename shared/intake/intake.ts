import { createRun, getRun, markEnqueued, type RunRecord } from "../aws/runs";
import { resolveSession } from "../aws/sessions";
import type { Db } from "../aws/dynamo";
import type { RunQueue } from "../aws/run-queue";
import type { AgentConfig } from "../config/config";
import { newRunId, runIdForIdempotencyKey, sha256Hex } from "../core/ids";
import { ApiError } from "../protocol/errors";
import type { AgentRequest } from "../protocol/agent-request";

export interface IntakeDeps {
  db: Db;
  queue: RunQueue;
  config: AgentConfig;
}

export interface AcceptedRun {
  runId: string;
  status: "accepted";
  acceptedAt: number;
  sessionKey: string;
  sessionId: string;
  /** True when this request repeated an earlier one (same idempotency key): nothing new started. */
  duplicate: boolean;
}

/**
 * Intake: validate (done by the caller's schema), resolve the session, write
 * the run record, enqueue a pointer on the FIFO queue, answer at once.
 *
 * Crash safety: the run record is written before the message is sent and
 * marked `enqueuedAt` after. A repeat of the same request (same idempotency
 * key -> same run id) finds a record without `enqueuedAt` and sends again; the
 * FIFO deduplication id (the run id) makes a double send harmless.
 */
export async function acceptRun(deps: IntakeDeps, request: AgentRequest, source: RunRecord["source"]): Promise<AcceptedRun> {
  const runId = request.idempotencyKey ? runIdForIdempotencyKey(request.idempotencyKey) : newRunId();
  const requestHash = hashRequest(request);
  const existing = await getRun(deps.db, runId);
  if (existing) return resumeExisting(deps, existing, requestHash);

  const session = await resolveSession(deps.db, request.sessionKey);
  const run: RunRecord = {
    v: 1,
    runId,
    sessionKey: request.sessionKey,
    sessionId: session.sessionId,
    message: request.message,
    ...(request.idempotencyKey ? { idempotencyKey: request.idempotencyKey } : {}),
    requestHash,
    source,
    status: "accepted",
    model: request.model ?? deps.config.model,
    timeoutMs: runTimeoutMs(deps.config, request.timeoutSeconds),
    acceptedAt: deps.db.now(),
  };
  if (!(await createRun(deps.db, run))) {
    // A concurrent duplicate won the conditional put: answer with its record.
    const winner = await getRun(deps.db, runId);
    if (!winner) throw new Error(`run ${runId} vanished during intake`);
    return resumeExisting(deps, winner, requestHash);
  }
  await enqueue(deps, run);
  return toAccepted(run, false);
}

async function resumeExisting(deps: IntakeDeps, run: RunRecord, requestHash: string): Promise<AcceptedRun> {
  if (run.requestHash !== requestHash) {
    throw new ApiError("IDEMPOTENCY_CONFLICT", "idempotencyKey was already used for a different request", {
      runId: run.runId,
    });
  }
  if (run.enqueuedAt === undefined) await enqueue(deps, run);
  return toAccepted(run, true);
}

async function enqueue(deps: IntakeDeps, run: RunRecord): Promise<void> {
  await deps.queue.send({ runId: run.runId, sessionKey: run.sessionKey });
  await markEnqueued(deps.db, run.runId);
}

function toAccepted(run: RunRecord, duplicate: boolean): AcceptedRun {
  return {
    runId: run.runId,
    status: "accepted",
    acceptedAt: run.acceptedAt,
    sessionKey: run.sessionKey,
    sessionId: run.sessionId,
    duplicate,
  };
}

function hashRequest(request: AgentRequest): string {
  return sha256Hex(JSON.stringify([request.sessionKey, request.message, request.model ?? null, request.timeoutSeconds ?? null]));
}

/** The run's budget: the request's timeout bounded by the configured one (0 = unlimited). */
function runTimeoutMs(config: AgentConfig, requestedSeconds: number | undefined): number {
  const configured = config.agent.timeoutSeconds;
  if (requestedSeconds === undefined) return configured * 1000;
  if (configured === 0) return requestedSeconds * 1000;
  return Math.min(requestedSeconds, configured) * 1000;
}
