import { isFollowing, subscribe, unsubscribe, type ConnectionRecord } from "../../../shared/aws/connections";
import { acceptRun, type AcceptedRun, type AcceptOptions, type IntakeDeps } from "../../../shared/intake/intake";
import type { AgentRequest } from "../../../shared/protocol/agent-request";
import { ApiError } from "../../../shared/protocol/errors";

/**
 * The intake of a WebSocket `agent` or `chat.send`, with this connection
 * subscribed to the session. The subscription is written beside the session
 * and the run record and lands before the run joins its lane (acceptRun waits
 * for it there), so not even `lifecycle start` can slip past the client; a
 * session the connection follows already has its subscription (three writes
 * fewer). A refused request keeps no subscription. The tenant check comes
 * before this (on `options.admission`).
 */
export async function acceptSubscribed(
  deps: IntakeDeps,
  target: { connectionId: string; connection: ConnectionRecord | undefined },
  request: AgentRequest,
  options: AcceptOptions,
): Promise<AcceptedRun> {
  const { connectionId, connection } = target;
  const subscribing = isFollowing(connection, request.sessionKey, deps.db.now())
    ? undefined
    : subscribe(deps.db, connectionId, request.sessionKey, { surface: connection?.surface });
  subscribing?.catch(() => undefined); // waited for below, whatever the intake does
  const accepted = await acceptRun(deps, request, "ws", { ...options, beforeLane: subscribing }).catch(async (error: unknown) => {
    await subscribing?.catch(() => undefined);
    // Refused (another tenant took the key meanwhile, a model outside the key's list): keep no subscription.
    if (error instanceof ApiError && (error.code === "NOT_FOUND" || error.code === "FORBIDDEN")) await unsubscribe(deps.db, connectionId, request.sessionKey);
    throw error;
  });
  // The intake waited for it on every path that reaches the lane; the answer always follows a landed one.
  await subscribing;
  return accepted;
}
