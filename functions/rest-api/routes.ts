import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from "aws-lambda";
import * as z from "zod";
import { lastEventSeq, readEvents } from "../../shared/aws/event-log";
import { readTranscript } from "../../shared/aws/transcript";
import { json, parseJsonBody, validate } from "../../shared/http/rest";
import { acceptRun } from "../../shared/intake/intake";
import { queuePlacement, sessionBusy } from "../../shared/intake/answer";
import { toWaitResult, waitForRun } from "../../shared/intake/wait";
import { AgentRequestSchema, SessionKeySchema, WaitRequestSchema } from "../../shared/protocol/agent-request";
import { DEFAULT_AGENT_ID } from "../../shared/protocol/limits";
import { abortRun } from "../../shared/run/abort";
import type { AppDeps } from "../../shared/runtime/app-deps";
import type { Caller } from "../../shared/core/access";
import { requireOwnedRun, requireOwnedSession } from "../../shared/tenancy/guard";

/** API Gateway's REST integration timeout is 29 s; a wait answers well before it. */
export const REST_MAX_WAIT_MS = 25_000;

export interface RouteInput {
  event: APIGatewayProxyEvent;
  params: Record<string, string>;
  context: Context;
  /** Who calls (authenticated, scope checked): every read and write is confined to its tenant. */
  caller: Caller;
}

export type Route = (deps: AppDeps, input: RouteInput) => Promise<APIGatewayProxyResult>;
/** A route that authenticates its caller itself (a channel's signature): no API key, no tenant caller. */
export type PublicRoute = (deps: AppDeps, input: Omit<RouteInput, "caller">) => Promise<APIGatewayProxyResult>;

/** 202 accepted|queued|steered|collected (200 for a repeat), 429 SESSION_BUSY when the lane refused it. */
export const postAgent: Route = async (deps, { event, caller }) => {
  const request = validate(AgentRequestSchema, parseJsonBody(event));
  const accepted = await acceptRun(deps, request, "rest", { caller });
  if (accepted.status === "rejected") throw sessionBusy(accepted);
  return json(accepted.duplicate ? 200 : 202, {
    runId: accepted.runId,
    status: accepted.status,
    acceptedAt: accepted.acceptedAt,
    sessionKey: accepted.sessionKey,
    ...queuePlacement(accepted),
    ...(accepted.duplicate ? { cached: true } : {}),
  });
};

export const postWait: Route = async (deps, { event, params, context, caller }) => {
  const { timeoutMs } = validate(WaitRequestSchema, parseJsonBody(event));
  await requireOwnedRun(deps.db, caller, params.runId);
  const budget = Math.min(timeoutMs ?? REST_MAX_WAIT_MS, REST_MAX_WAIT_MS, Math.max(0, context.getRemainingTimeInMillis() - 2000));
  return json(200, await waitForRun(deps.db, params.runId, budget));
};

export const getRunRoute: Route = async (deps, { params, caller }) => {
  const run = await requireOwnedRun(deps.db, caller, params.runId);
  return json(200, {
    ...toWaitResult(run),
    runStatus: run.status,
    sessionKey: run.sessionKey,
    acceptedAt: run.acceptedAt,
    model: run.model,
    // Where a client resumes the event stream from (`events.replay` / `GET …/events?after=`).
    lastSeq: await lastEventSeq(deps.db, run.runId),
    ...(run.result ? { result: run.result } : {}),
  });
};

export const EventsQuerySchema = z.lazy(() => z.object({
  after: z.coerce.number().int().min(0).default(0),
  limit: z.coerce.number().int().min(1).max(1000).default(1000),
}));

/** The run's event log after `after` (its `seq`), a page of at most `limit`; `nextAfter` continues. */
export const getRunEvents: Route = async (deps, { event, params, caller }) => {
  const { after, limit } = validate(EventsQuerySchema, event.queryStringParameters ?? {});
  const run = await requireOwnedRun(deps.db, caller, params.runId);
  const events = await readEvents(deps.db, params.runId, after, limit + 1);
  const page = events.slice(0, limit);
  return json(200, {
    runId: params.runId,
    runStatus: run.status,
    events: page.map(({ v: _v, expiresAt: _e, ...rest }) => ({ ...rest, agentId: DEFAULT_AGENT_ID })),
    hasMore: events.length > limit,
    nextAfter: page.length > 0 ? page[page.length - 1]!.seq : after,
  });
};

export const AbortBodySchema = z.lazy(() => z.object({ reason: z.string().max(500).optional() }).strict());

/** 202 while a running run stops (`aborting`), 200 when it ended here or had already ended. */
export const postAbort: Route = async (deps, { event, params, caller }) => {
  const { reason } = validate(AbortBodySchema, parseJsonBody(event));
  await requireOwnedRun(deps.db, caller, params.runId);
  const outcome = await abortRun(deps, params.runId, reason ?? "POST /v1/runs/{runId}/abort");
  return json(outcome.status === "aborting" ? 202 : 200, outcome);
};

export const getHistory: Route = async (deps, { params, caller }) => {
  const sessionKey = validate(SessionKeySchema, params.sessionKey);
  const session = await requireOwnedSession(deps.db, caller, sessionKey);
  const entries = await readTranscript(deps.db, session.sessionId);
  return json(200, {
    sessionKey,
    sessionId: session.sessionId,
    messages: entries.map((entry) => ({ seq: entry.seq, runId: entry.runId, ts: entry.ts, ...entry.message })),
  });
};
