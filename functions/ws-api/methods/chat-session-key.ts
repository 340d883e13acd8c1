import { DEFAULT_AGENT_ID } from "../../../shared/protocol/limits";
import { ApiError } from "../../../shared/protocol/errors";

/**
 * The session key of OpenClaw's chat surface (`chat.*`, `sessions.*`): the
 * key as sent, as the `agent` method takes it (so a bare `main` and the
 * CLI's `agent:main:main` stay two sessions, as they always were here);
 * `agentId`, when given, must be the one agent this backend runs.
 */
export function chatSessionKey(sessionKey: string, agentId?: string): string {
  if (agentId !== undefined && agentId !== DEFAULT_AGENT_ID) {
    throw new ApiError("INVALID_REQUEST", `unknown agent id "${agentId}" (this backend runs "${DEFAULT_AGENT_ID}")`);
  }
  return sessionKey;
}
