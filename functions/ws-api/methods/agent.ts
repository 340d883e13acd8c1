import * as z from "zod";
import { ownedOrNone, requireOwnedRun } from "../../../shared/tenancy/guard";
import { getRun, TERMINAL_STATUSES } from "../../../shared/aws/runs";
import { validate } from "../../../shared/http/rest";
import { RunIdSchema } from "../../../shared/protocol/ids";
import { readAdmission } from "../../../shared/intake/intake";
import { acceptSubscribed } from "./subscribed-intake";
import { queuePlacement, sessionBusy } from "../../../shared/intake/answer";
import { waitForRun } from "../../../shared/intake/wait";
import { finalResponseFrame } from "../../../shared/protocol/agent-final";
import { CAP_FRAME_CHUNKS, DEFAULT_AGENT_ID, MAX_FRAME_BYTES } from "../../../shared/protocol/limits";
import { frameIdempotencyKey, toAgentRequest, WsAgentParamsSchema } from "../../../shared/protocol/ws-agent";
import { FrameReply, type Method } from "./types";
import type { AgentRequest } from "../../../shared/protocol/agent-request";

/** agent.wait default (OpenClaw): 30 s, wait-only. */
export const DEFAULT_WAIT_MS = 30_000;

/**
 * `agent`: two answers on the request id. Now: `accepted` (or, for a repeated
 * idempotency key, `in_flight` while the run goes and the cached final answer
 * after it). Later: the final answer, posted by whatever ends the run to this
 * connection only (shared/run/final-response.ts).
 */
export const agentMethod: Method = async (deps, { connectionId, requestId, connection, params, caller, admitted = Promise.resolve() }) => {
  // Over the rate limit, RATE_LIMITED is the answer, whatever else is wrong with the frame.
  const request = await afterAdmitted(admitted, () => agentRequestOf(params, connectionId, requestId));
  // Another tenant's session is refused before this connection subscribes to it. The intake's reads
  // (run, lane, session) are made here, in one request, and handed to it; they go out while the
  // rate limit is counted, and nothing is written before it let the request in.
  const reading = readAdmission(deps, request, caller);
  reading.catch(() => undefined);
  await admitted;
  const admission = await reading;
  if (caller) ownedOrNone(caller, admission.read.session, request.sessionKey);
  const frameChunks = connection?.caps?.includes(CAP_FRAME_CHUNKS) ?? false;
  const accepted = await acceptSubscribed(deps, { connectionId, connection }, request, { requester: { connectionId, requestId, frameChunks }, caller, admission });
  // Refused by the session lane (queue mode reject, cap with drop `new`): nothing will follow this answer.
  if (accepted.status === "rejected") throw sessionBusy(accepted);
  const ack = { runId: accepted.runId, sessionKey: accepted.sessionKey, agentId: DEFAULT_AGENT_ID, acceptedAt: accepted.acceptedAt };
  // Where the message went (accepted | queued | steered | collected, shared/intake/answer.ts) is `intake`:
  // `status` stays "accepted" because OpenClaw's client takes any other status as the final answer.
  if (!accepted.duplicate) return { ...ack, status: "accepted", intake: accepted.status, ...queuePlacement(accepted) };
  const run = await getRun(deps.db, accepted.runId);
  if (run && TERMINAL_STATUSES.has(run.status)) {
    return new FrameReply(finalResponseFrame(requestId, run, frameChunks ? undefined : MAX_FRAME_BYTES));
  }
  return { ...ack, status: "in_flight", cached: true };
};

function agentRequestOf(params: unknown, connectionId: string, requestId: string): AgentRequest {
  const parsed = toAgentRequest(validate(WsAgentParamsSchema, params));
  // The route is invoked asynchronously (retried by Lambda on failure): a frame without a key still starts one run.
  return parsed.idempotencyKey ? parsed : { ...parsed, idempotencyKey: frameIdempotencyKey(connectionId, requestId) };
}

/** `parse()`'s value; its error only once the rate limit let the request in (else the limit's). */
async function afterAdmitted<T>(admitted: Promise<void>, parse: () => T): Promise<T> {
  try {
    return parse();
  } catch (error) {
    await admitted;
    throw error;
  }
}

export const WaitParamsSchema = z.lazy(() => z.object({ runId: RunIdSchema, timeoutMs: z.number().int().min(0).optional() }).strict());

export const agentWaitMethod: Method = async (deps, { params, context, caller }) => {
  const { runId, timeoutMs = DEFAULT_WAIT_MS } = validate(WaitParamsSchema, params);
  if (caller) await requireOwnedRun(deps.db, caller, runId);
  // The Lambda must answer before it is stopped; a longer wait returns `timeout` and can be repeated.
  const budget = Math.min(timeoutMs, Math.max(0, context.getRemainingTimeInMillis() - 2000));
  return waitForRun(deps.db, runId, budget);
};

/** OpenClaw's `agents.list`: the one agent this backend runs. */
export const agentsListMethod: Method = async (deps, { params }) => {
  validate(z.object({}).loose(), params ?? {});
  return {
    defaultId: DEFAULT_AGENT_ID,
    mainKey: "main",
    scope: "per-sender",
    selectionRequired: false,
    agents: [{ id: DEFAULT_AGENT_ID, name: DEFAULT_AGENT_ID, model: { primary: deps.config.model } }],
  };
};
