import { getConnection } from "../../shared/aws/connections";
import type { Db } from "../../shared/aws/dynamo";
import type { FramePusher } from "../../shared/aws/push";
import type { Scope } from "../../shared/core/access";

/** A socket that has not authenticated this long after it opened is closed. */
export const AUTH_DEADLINE_MS = 10_000;
/** The in-band `connect` attempt that, refused, closes the socket. */
export const MAX_FAILED_CONNECTS = 5;

export interface DeadlineDeps {
  db: Db;
  pusher: FramePusher;
  sleep?: (ms: number) => Promise<void>;
}

/**
 * When the post-connect step looks again whether the socket authenticated:
 * soon first (a client sends `connect` right after the challenge), then less
 * often, the last step repeating until the deadline. The step's invocation
 * ends at the first look that finds the socket authenticated, instead of
 * sleeping out the whole deadline: in AWS that sleep was 10 s of Lambda
 * duration on every connection (at 512 MB, more than a whole run costs), and
 * locally a sandbox held per new socket.
 */
export const AUTH_POLL_DELAYS_MS = [100, 200, 400, 800, 1600, 3200] as const;

/**
 * Runs in the post-connect step (after the challenge): an anonymous socket
 * gets AUTH_DEADLINE_MS from its connect to send a valid `connect`, then is
 * closed through the Management API. A socket the $connect authorizer let in
 * with a key is authenticated already and returns at once; one that
 * authenticates in band returns at the next look (AUTH_POLL_DELAYS_MS). Each
 * look is a consistent read, so the one at the deadline never closes a
 * socket that authenticated before it.
 */
export async function closeIfStillAnonymous(deps: DeadlineDeps, connectionId: string, connectedAt: number): Promise<boolean> {
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  for (let look = 0; ; look += 1) {
    const record = await getConnection(deps.db, connectionId);
    if (!record || record.authenticated) return false;
    const remaining = connectedAt + AUTH_DEADLINE_MS - deps.db.now();
    if (remaining <= 0) break;
    await sleep(Math.min(remaining, AUTH_POLL_DELAYS_MS[Math.min(look, AUTH_POLL_DELAYS_MS.length - 1)]!));
  }
  await deps.pusher.disconnect(connectionId);
  return true;
}

/** The scope each WebSocket method needs; a method not listed needs `operator.write`. */
export const METHOD_SCOPES: Readonly<Record<string, Scope>> = {
  agent: "operator.write",
  "agent.wait": "operator.read",
  "agents.list": "operator.read",
  "sessions.subscribe": "operator.read",
  "sessions.unsubscribe": "operator.read",
  "sessions.list": "operator.read",
  "sessions.history": "operator.read",
  "runs.abort": "operator.write",
  "chat.abort": "operator.write",
  "events.replay": "operator.read",
  "plugin.approval.resolve": "operator.approvals",
  "exec.approval.resolve": "operator.approvals",
  "tools.result": "operator.write",
  "chat.send": "operator.write",
  "chat.history": "operator.read",
  "sessions.resolve": "operator.read",
  "sessions.describe": "operator.read",
  "sessions.reset": "operator.write",
  "sessions.patch": "operator.write",
  "models.list": "operator.read",
  "commands.list": "operator.read",
  status: "operator.read",
  "config.get": "operator.read",
};

export function scopeOfMethod(method: string): Scope {
  return Object.hasOwn(METHOD_SCOPES, method) ? METHOD_SCOPES[method]! : "operator.write";
}
