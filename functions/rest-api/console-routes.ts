import * as z from "zod";
import { listAttempts, type AttemptRecord } from "../../shared/aws/attempts";
import { listSessions } from "../../shared/aws/sessions";
import { readSpendItem } from "../../shared/aws/usage";
import { keys } from "../../shared/aws/keys";
import { json, validate } from "../../shared/http/rest";
import type { Route } from "./routes";
import { owns, requireOwnedRun } from "../../shared/tenancy/guard";

/**
 * Read-only routes the web console (console/) needs beyond the run and
 * history routes: the session list and a run's loop path. Authenticated by
 * the router like every route.
 */

const SessionsQuerySchema = z.lazy(() => z.object({ limit: z.coerce.number().int().min(1).max(500).default(50) }).strict());

/** `GET /v1/sessions?limit=` — sessions, most recently active first (as `sessions.list`). */
export const getSessions: Route = async (deps, { event, caller }) => {
  const { limit } = validate(SessionsQuerySchema, event.queryStringParameters ?? {});
  // The caller's tenant's sessions only (as `sessions.list`).
  const sessions = (await listSessions(deps.db, 1000)).filter((s) => owns(caller, s)).slice(0, limit);
  return json(200, {
    sessions: sessions.map((s) => ({
      sessionKey: s.sessionKey,
      sessionId: s.sessionId,
      createdAt: s.createdAt,
      updatedAt: s.updatedAt,
      ...(s.lastRunId ? { lastRunId: s.lastRunId } : {}),
    })),
  });
};

/** One step of the loop path: the attempt, how it ended, and what the loop decided next. */
function traceStep(attempt: AttemptRecord) {
  const { outcome } = attempt;
  return {
    n: attempt.iteration,
    model: attempt.model,
    outcome: outcome.kind,
    ...(outcome.kind === "failed"
      ? { failure: { kind: outcome.failure.kind, message: outcome.failure.message, retryable: outcome.failure.retryable, ...(outcome.failure.retryAfterMs !== undefined ? { retryAfterMs: outcome.failure.retryAfterMs } : {}) } }
      : {}),
    startedAt: attempt.startedAt,
    endedAt: attempt.endedAt,
    durationMs: attempt.endedAt - attempt.startedAt,
    usage: attempt.usage,
    ...(attempt.costUsd !== undefined ? { costUsd: attempt.costUsd } : {}),
    modelTurns: attempt.modelTurns,
    toolCalls: attempt.toolCalls,
    ...(attempt.decision ? { decision: attempt.decision, decidedAt: attempt.decidedAt } : {}),
  };
}

/**
 * `GET /v1/runs/{runId}/trace` — the run's loop path: every attempt (wasted
 * ones too) with its failure kind, timings, usage and the decision that
 * followed (retry, wait, rotate, fall back, compact, truncate, finalize),
 * plus the run's spend and timings.
 */
export const getRunTrace: Route = async (deps, { params, caller }) => {
  // Another tenant's run is not found (docs/security.md).
  const run = await requireOwnedRun(deps.db, caller, params.runId);
  const [attempts, spend] = await Promise.all([listAttempts(deps.db, run.runId), readSpendItem(deps.db, keys.runUsage(run.runId))]);
  return json(200, {
    runId: run.runId,
    sessionKey: run.sessionKey,
    status: run.status,
    model: run.model,
    acceptedAt: run.acceptedAt,
    ...(run.startedAt !== undefined ? { startedAt: run.startedAt } : {}),
    ...(run.endedAt !== undefined ? { endedAt: run.endedAt, durationMs: run.endedAt - (run.startedAt ?? run.acceptedAt) } : {}),
    ...(spend ? { spend: { calls: spend.calls, input: spend.input, output: spend.output, tokens: spend.tokens, costUsd: spend.costUsd, wastedTokens: spend.wastedTokens } } : {}),
    attempts: attempts.map(traceStep),
  });
};
