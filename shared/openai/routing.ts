/**
 * Which agent and which session an OpenAI request goes to, as OpenClaw's
 * gateway resolves them (src/gateway/http-utils.ts there):
 * - agent: header `x-openclaw-agent-id`, else `model: "openclaw:<id>"`,
 *   `"openclaw/<id>"` or `"agent:<id>"`, else `main`;
 * - session: header `x-openclaw-session-key` verbatim; else, with an OpenAI
 *   `user`, the stable `agent:<id>:<prefix>-user:<user>`; else a new
 *   `agent:<id>:<prefix>:<uuid>` per request.
 * Pure: the caller passes the headers and a fresh id.
 */
import { createHash } from "node:crypto";
import { SessionKeySchema } from "../protocol/agent-request";
import { DEFAULT_AGENT_ID } from "../protocol/limits";

export const AGENT_ID_HEADER = "x-openclaw-agent-id";
export const SESSION_KEY_HEADER = "x-openclaw-session-key";

const AGENT_MODEL = /^(?:openclaw[:/]|agent:)(?<agentId>[a-z0-9][a-z0-9_-]{0,63})$/i;

export function agentIdFor(model: string, headerValue: string | undefined): string {
  const fromHeader = headerValue?.trim().toLowerCase();
  if (fromHeader) return fromHeader;
  return AGENT_MODEL.exec(model.trim())?.groups?.agentId?.toLowerCase() ?? DEFAULT_AGENT_ID;
}

/** `provider/model` in the request selects that model for the run (the agent's default otherwise). */
export function modelOverrideFor(model: string): string | undefined {
  if (AGENT_MODEL.test(model.trim()) || model.trim() === "openclaw") return undefined;
  return /^[a-z0-9-]+\/.+$/.test(model) ? model : undefined;
}

export interface SessionChoice {
  sessionKey: string;
  /** The caller will come back to this session (its transcript holds the earlier turns). */
  stable: boolean;
}

export function sessionFor(input: { agentId: string; prefix: "openai" | "openresponses"; headerValue?: string; user?: string; freshId: string }): SessionChoice {
  const explicit = input.headerValue?.trim();
  if (explicit) return { sessionKey: explicit, stable: true };
  const user = input.user?.trim();
  if (user) return { sessionKey: `agent:${input.agentId}:${input.prefix}-user:${keyPart(user)}`, stable: true };
  return { sessionKey: `agent:${input.agentId}:${input.prefix}:${input.freshId}`, stable: false };
}

/** A `user` that cannot be part of a session key (characters, length) is replaced by its digest. */
function keyPart(user: string): string {
  const candidate = `agent:main:openresponses-user:${user}`;
  return SessionKeySchema.safeParse(candidate).success ? user : `sha256-${createHash("sha256").update(user).digest("hex").slice(0, 32)}`;
}
