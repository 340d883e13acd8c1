import { CAP_FRAME_CHUNKS, MAX_FRAME_BYTES, MAX_MESSAGE_BYTES, TICK_INTERVAL_MS } from "./limits";
import { PROTOCOL_VERSION, SERVER_NAME, SERVER_VERSION } from "./frames";
import { CAP_SURFACE_AGENT, CAP_SURFACE_CHAT } from "./surface";

/** Every event name this server sends. */
export const SERVER_EVENTS = ["connect.challenge", "agent", "chat", "chunk"] as const;

/** Scopes a valid token may be granted (OpenClaw's operator scopes); without a request, admin. */
const KNOWN_SCOPES = new Set(["operator.admin", "operator.read", "operator.write", "operator.approvals"]);

export function grantedScopes(requested: readonly string[] | undefined): string[] {
  const known = (requested ?? []).filter((scope) => KNOWN_SCOPES.has(scope));
  return known.length > 0 ? known : ["operator.admin"];
}

export interface HelloInput {
  connectionId: string;
  methods: readonly string[];
  role: string;
  scopes: string[];
}

/**
 * The `connect` answer, in OpenClaw's `hello-ok` shape with our real values:
 * protocol version, server identity, the methods and events implemented
 * here, limits (payload and frame size, tick interval) and the granted auth.
 */
export function helloPayload(input: HelloInput) {
  return {
    type: "hello-ok",
    protocol: PROTOCOL_VERSION,
    server: { name: SERVER_NAME, version: SERVER_VERSION, connId: input.connectionId, connectionId: input.connectionId },
    features: { methods: [...input.methods], events: [...SERVER_EVENTS], capabilities: [CAP_FRAME_CHUNKS, CAP_SURFACE_AGENT, CAP_SURFACE_CHAT] },
    auth: { method: "token", role: input.role, scopes: input.scopes },
    policy: {
      maxPayload: MAX_MESSAGE_BYTES,
      maxFrameBytes: MAX_FRAME_BYTES,
      tickIntervalMs: TICK_INTERVAL_MS,
    },
  };
}
