import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from "aws-lambda";
import { z } from "zod";
import { readEvents } from "../../shared/aws/event-log";
import { getRun } from "../../shared/aws/runs";
import { getSession } from "../../shared/aws/sessions";
import { readTranscript } from "../../shared/aws/transcript";
import { json, parseJsonBody, validate } from "../../shared/http/rest";
import { acceptRun } from "../../shared/intake/intake";
import { toWaitResult, waitForRun } from "../../shared/intake/wait";
import { AgentRequestSchema, SessionKeySchema, WaitRequestSchema } from "../../shared/protocol/agent-request";
import { ApiError } from "../../shared/protocol/errors";
import type { AppDeps } from "../../shared/runtime/app-deps";

/** API Gateway's REST integration timeout is 29 s; a wait answers well before it. */
export const REST_MAX_WAIT_MS = 25_000;

export interface RouteInput {
  event: APIGatewayProxyEvent;
  params: Record<string, string>;
  context: Context;
}

export type Route = (deps: AppDeps, input: RouteInput) => Promise<APIGatewayProxyResult>;

export const postAgent: Route = async (deps, { event }) => {
  const request = validate(AgentRequestSchema, parseJsonBody(event));
  const accepted = await acceptRun(deps, request, "rest");
  return json(accepted.duplicate ? 200 : 202, {
    runId: accepted.runId,
    status: accepted.status,
    acceptedAt: accepted.acceptedAt,
    sessionKey: accepted.sessionKey,
    ...(accepted.duplicate ? { cached: true } : {}),
  });
};

export const postWait: Route = async (deps, { event, params, context }) => {
  const { timeoutMs } = validate(WaitRequestSchema, parseJsonBody(event));
  const budget = Math.min(timeoutMs ?? REST_MAX_WAIT_MS, REST_MAX_WAIT_MS, Math.max(0, context.getRemainingTimeInMillis() - 2000));
  return json(200, await waitForRun(deps.db, params.runId, budget));
};

export const getRunRoute: Route = async (deps, { params }) => {
  const run = await getRun(deps.db, params.runId);
  if (!run) throw new ApiError("NOT_FOUND", `run ${params.runId} not found`);
  return json(200, {
    ...toWaitResult(run),
    runStatus: run.status,
    sessionKey: run.sessionKey,
    acceptedAt: run.acceptedAt,
    model: run.model,
    ...(run.result ? { result: run.result } : {}),
  });
};

const AfterSchema = z.coerce.number().int().min(0).default(0);

export const getRunEvents: Route = async (deps, { event, params }) => {
  const after = validate(AfterSchema, event.queryStringParameters?.after);
  const run = await getRun(deps.db, params.runId);
  if (!run) throw new ApiError("NOT_FOUND", `run ${params.runId} not found`);
  const events = await readEvents(deps.db, params.runId, after);
  return json(200, { runId: params.runId, events: events.map(({ v: _v, expiresAt: _e, ...rest }) => rest) });
};

export const getHistory: Route = async (deps, { params }) => {
  const sessionKey = validate(SessionKeySchema, params.sessionKey);
  const session = await getSession(deps.db, sessionKey);
  if (!session) throw new ApiError("NOT_FOUND", `session ${sessionKey} not found`);
  const entries = await readTranscript(deps.db, session.sessionId);
  return json(200, {
    sessionKey,
    sessionId: session.sessionId,
    messages: entries.map((entry) => ({ seq: entry.seq, runId: entry.runId, ts: entry.ts, ...entry.message })),
  });
};
