import { createHash } from "node:crypto";
import * as z from "zod";
import { ApiError } from "./errors";
import { validate } from "./validate";
import { AgentRequestSchema, IdempotencyKeySchema, MessageTextSchema, type AgentRequest } from "./agent-request";
import { DEFAULT_AGENT_ID } from "./limits";

/**
 * Params of the WebSocket `agent` method: ours (`sessionKey`, `timeoutSeconds`,
 * `streamThinking`, `queue`, `trigger`) and everything OpenClaw's CLI sends
 * (reference openclaw-gateway-protocol.md section 4). `channel` selects that
 * channel's queue settings; the other delivery fields (`deliver`, `to`,
 * `replyChannel`, ...) are accepted and ignored: this backend answers on the
 * socket and has no outbound channels.
 */
export const WsAgentParamsSchema = z.lazy(() => {
  const request = AgentRequestSchema.unwrap().shape;
  return z
    .object({
      message: MessageTextSchema,
      sessionKey: z.string().min(1).optional(),
      sessionId: z.string().min(1).max(100).optional(),
      agentId: z.string().min(1).optional(),
      model: z.string().min(1).optional(),
      thinking: z.string().min(1).max(32).optional(),
      idempotencyKey: IdempotencyKeySchema.optional(),
      /** OpenClaw: seconds, 0 = no limit of its own. */
      timeout: z.number().min(0).optional(),
      timeoutSeconds: z.number().int().positive().optional(),
      extraSystemPrompt: z.string().optional(),
      streamThinking: z.boolean().optional(),
      lane: z.string().optional(),
      deliver: z.boolean().optional(),
      bestEffortDeliver: z.boolean().optional(),
      to: z.string().optional(),
      replyTo: z.string().optional(),
      channel: z.string().optional(),
      replyChannel: z.string().optional(),
      replyAccountId: z.string().optional(),
      label: z.string().optional(),
      /** Lanes (issue 6): queue mode and options for a busy session; what started the run. */
      queue: request.queue,
      trigger: request.trigger,
      /** Client tools (docs/client-tools.md). */
      clientTools: request.clientTools,
      clientToolTimeoutSeconds: request.clientToolTimeoutSeconds,
    })
    .strict();
});
export type WsAgentParams = z.infer<typeof WsAgentParamsSchema>;

const MAX_RUN_SECONDS = 172_800;

/**
 * The session key, as OpenClaw resolves it: an explicit key wins; a bare
 * `sessionId` becomes `agent:<agentId>:explicit:<sessionId>`; nothing at all
 * is the agent's main session `agent:<agentId>:main`.
 */
export function sessionKeyOf(params: Pick<WsAgentParams, "sessionKey" | "sessionId" | "agentId">): string {
  if (params.sessionKey) return params.sessionKey;
  const agentId = params.agentId ?? DEFAULT_AGENT_ID;
  return params.sessionId ? `agent:${agentId}:explicit:${params.sessionId}` : `agent:${agentId}:main`;
}

/** Maps validated `agent` params onto the intake request (validated again by the intake schema). */
export function toAgentRequest(params: WsAgentParams): AgentRequest {
  if (params.agentId && params.agentId !== DEFAULT_AGENT_ID) {
    throw new ApiError("INVALID_REQUEST", `unknown agent id "${params.agentId}" (this backend runs "${DEFAULT_AGENT_ID}")`);
  }
  const timeoutSeconds = params.timeoutSeconds ?? (params.timeout ? Math.min(Math.ceil(params.timeout), MAX_RUN_SECONDS) : undefined);
  const candidate = {
    sessionKey: sessionKeyOf(params),
    message: params.message,
    ...(params.idempotencyKey ? { idempotencyKey: params.idempotencyKey } : {}),
    ...(params.model ? { model: params.model } : {}),
    ...(timeoutSeconds ? { timeoutSeconds: Math.min(timeoutSeconds, MAX_RUN_SECONDS) } : {}),
    ...(params.thinking ? { thinking: params.thinking } : {}),
    ...(params.extraSystemPrompt ? { extraSystemPrompt: params.extraSystemPrompt } : {}),
    ...(params.streamThinking ? { streamThinking: true } : {}),
    ...(params.queue ? { queue: params.queue } : {}),
    ...(params.channel ? { channel: params.channel.slice(0, 64) } : {}),
    ...(params.trigger ? { trigger: params.trigger } : {}),
    ...(params.clientTools ? { clientTools: params.clientTools } : {}),
    ...(params.clientToolTimeoutSeconds ? { clientToolTimeoutSeconds: params.clientToolTimeoutSeconds } : {}),
  };
  return validate(AgentRequestSchema, candidate);
}

/**
 * The idempotency key of an `agent` frame that carries none: derived from the
 * connection and the frame's request id, so a retried asynchronous invocation
 * of the same frame (Lambda retries a failed Event invocation) maps to the
 * same run instead of starting a second one.
 */
export function frameIdempotencyKey(connectionId: string, requestId: string): string {
  return `ws-${createHash("sha256").update(`${connectionId}\n${requestId}`).digest("base64url")}`;
}
