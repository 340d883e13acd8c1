import type { Context } from "aws-lambda";
import { z } from "zod";
import { readEvents } from "../../shared/aws/event-log";
import { getRun } from "../../shared/aws/runs";
import { getSession } from "../../shared/aws/sessions";
import { readTranscript } from "../../shared/aws/transcript";
import { markAuthenticated, subscribe, unsubscribe } from "../../shared/aws/connections";
import { validate } from "../../shared/http/rest";
import { acceptRun } from "../../shared/intake/intake";
import { waitForRun } from "../../shared/intake/wait";
import { AgentRequestSchema, SessionKeySchema } from "../../shared/protocol/agent-request";
import { ApiError } from "../../shared/protocol/errors";
import { PROTOCOL_VERSION } from "../../shared/protocol/frames";
import { MAX_WS_MESSAGE_BYTES } from "../../shared/aws/push";
import { tokenMatches } from "../../shared/runtime/auth";
import type { AppDeps } from "../../shared/runtime/app-deps";

export interface MethodInput {
  connectionId: string;
  params: unknown;
  context: Context;
}

export type Method = (deps: AppDeps, input: MethodInput) => Promise<unknown>;

/** agent.wait default (OpenClaw): 30 s, wait-only. */
export const DEFAULT_WAIT_MS = 30_000;

const ConnectParamsSchema = z.looseObject({
  auth: z.looseObject({ token: z.string().optional() }).optional(),
  token: z.string().optional(),
});

const connect: Method = async (deps, { connectionId, params }) => {
  const parsed = validate(ConnectParamsSchema, params ?? {});
  const token = parsed.auth?.token ?? parsed.token;
  if (!tokenMatches(token, deps.runtime.authTokenSha256)) {
    throw new ApiError("UNAUTHORIZED", token ? "unauthorized: token mismatch" : "unauthorized: token missing", {
      code: token ? "AUTH_TOKEN_MISMATCH" : "AUTH_TOKEN_MISSING",
    });
  }
  await markAuthenticated(deps.db, connectionId);
  return {
    type: "hello-ok",
    protocol: PROTOCOL_VERSION,
    server: { name: "serverless-agent-runner", connectionId },
    features: { methods: [...AUTHENTICATED_METHOD_NAMES, "connect"], events: ["agent"] },
    policy: { maxPayload: MAX_WS_MESSAGE_BYTES, maxFrameBytes: 32 * 1024 },
    auth: { role: "operator" },
  };
};

const agent: Method = async (deps, { connectionId, params }) => {
  const request = validate(AgentRequestSchema, params);
  // Subscribe first, so not even `lifecycle start` can slip past this client.
  await subscribe(deps.db, connectionId, request.sessionKey);
  const accepted = await acceptRun(deps, request, "ws");
  return {
    runId: accepted.runId,
    status: accepted.status,
    acceptedAt: accepted.acceptedAt,
    sessionKey: accepted.sessionKey,
    ...(accepted.duplicate ? { cached: true } : {}),
  };
};

const WaitParamsSchema = z.object({ runId: z.string().min(1), timeoutMs: z.number().int().min(0).optional() }).strict();

const agentWait: Method = async (deps, { params, context }) => {
  const { runId, timeoutMs = DEFAULT_WAIT_MS } = validate(WaitParamsSchema, params);
  // The Lambda must answer before it is stopped; a longer wait returns `timeout` and can be repeated.
  const budget = Math.min(timeoutMs, Math.max(0, context.getRemainingTimeInMillis() - 2000));
  return waitForRun(deps.db, runId, budget);
};

const SessionParamsSchema = z.object({ sessionKey: SessionKeySchema }).strict();

const sessionsSubscribe: Method = async (deps, { connectionId, params }) => {
  const { sessionKey } = validate(SessionParamsSchema, params);
  await subscribe(deps.db, connectionId, sessionKey);
  return { sessionKey, subscribed: true };
};

const sessionsUnsubscribe: Method = async (deps, { connectionId, params }) => {
  const { sessionKey } = validate(SessionParamsSchema, params);
  await unsubscribe(deps.db, connectionId, sessionKey);
  return { sessionKey, subscribed: false };
};

const sessionsHistory: Method = async (deps, { params }) => {
  const { sessionKey } = validate(SessionParamsSchema, params);
  const session = await getSession(deps.db, sessionKey);
  if (!session) throw new ApiError("NOT_FOUND", `session ${sessionKey} not found`);
  const entries = await readTranscript(deps.db, session.sessionId);
  return { sessionKey, sessionId: session.sessionId, messages: entries.map((e) => ({ seq: e.seq, runId: e.runId, ts: e.ts, ...e.message })) };
};

const ReplayParamsSchema = z.object({ runId: z.string().min(1), afterSeq: z.number().int().min(0).default(0) }).strict();

const eventsReplay: Method = async (deps, { params }) => {
  const { runId, afterSeq } = validate(ReplayParamsSchema, params);
  if (!(await getRun(deps.db, runId))) throw new ApiError("NOT_FOUND", `run ${runId} not found`);
  const events = await readEvents(deps.db, runId, afterSeq);
  return { runId, events: events.map(({ v: _v, expiresAt: _e, ...rest }) => rest) };
};

/** Methods that need an authenticated connection. */
export const AUTHENTICATED_METHODS: Record<string, Method> = {
  agent,
  "agent.wait": agentWait,
  "sessions.subscribe": sessionsSubscribe,
  "sessions.unsubscribe": sessionsUnsubscribe,
  "sessions.history": sessionsHistory,
  "events.replay": eventsReplay,
};
const AUTHENTICATED_METHOD_NAMES = Object.keys(AUTHENTICATED_METHODS);

export const CONNECT_METHOD: Method = connect;
