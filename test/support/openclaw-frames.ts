/**
 * The frames OpenClaw's CLI (`openclaw agent`, 2026.9.6, protocol 4, gateway
 * mode) sends, exactly as captured in ../shared/reference/openclaw-gateway-protocol.md
 * section 2: only the token, the ids and the message vary. Request ids look
 * like `<n>:<uuid>`, n counting from 1 on each connection.
 */
import { randomUUID } from "node:crypto";

export const cliRequestId = (n: number) => `${n}:${randomUUID()}`;

/** `connect` from capture (a): remote addressing (`OPENCLAW_GATEWAY_URL` + token) asks for operator.write. */
export function cliConnect(token: string, scopes: string[] = ["operator.write"]) {
  return {
    type: "req",
    id: cliRequestId(1),
    method: "connect",
    params: {
      minProtocol: 4,
      maxProtocol: 4,
      client: { id: "cli", version: "2026.9.6", platform: "linux", deviceFamily: "Linux", mode: "cli", instanceId: randomUUID() },
      caps: [],
      auth: { token },
      role: "operator",
      scopes,
    },
  };
}

/** `agent` from capture (a): `--session-id <id> --message <text>` with the default 600 s timeout. */
export function cliAgent(message: string, session: { sessionId?: string; sessionKey?: string; agentId?: string }, idempotencyKey: string = randomUUID(), timeout = 600) {
  return {
    type: "req",
    id: cliRequestId(2),
    method: "agent",
    params: { message, ...session, deliver: false, timeout, idempotencyKey },
  };
}

/** `agents.list` from capture (d): its own connection, before the agent one, when no selector is given. */
export function cliAgentsList() {
  return { type: "req", id: cliRequestId(2), method: "agents.list", params: {} };
}

/** `chat.abort` the CLI sends on SIGINT/SIGTERM after an ack, on the same socket. */
export function cliChatAbort(sessionKey: string, runId: string) {
  return { type: "req", id: cliRequestId(3), method: "chat.abort", params: { sessionKey, runId, agentId: "main" } };
}
