/**
 * Single-table key layout (pk / sk, both strings). One place so the access
 * patterns are visible at a glance:
 *
 *   SESSION#<sessionKey>   SESSION              session metadata (key -> current sessionId)
 *   SESSIONS               S#<sessionKey>       session index (sessions.list without a Scan)
 *   TRANSCRIPT#<sessionId> HEAD                 writer claim (run, epoch, lease) + nextSeq
 *   TRANSCRIPT#<sessionId> E#<seq>              transcript entries, append-only
 *   RUN#<runId>            RUN                  run record (status, timestamps, result)
 *   RUN#<runId>            EV#<seq>             event log (replay after a sequence number)
 *   RUN#<runId>            ATTEMPT#<n>          attempt diagnostics
 *   RUN#<runId>            TOOL#<toolCallId>    tool-call ledger: a mutating call started / completed (+ result)
 *   RUN#<runId>            PENDING_TURN         the tool turn being executed, until it is committed
 *   RUN#<runId>            USAGE                the run's spend (tokens, cost, wasted), atomic ADD counters
 *   RUN#<runId>            INPUT#<inputId>      external input the run waits for (approval, client tool) + its task token
 *   SESSION#<sessionKey>   ALLOW#<toolName>     an `allow-always` approval, for that tool in that session
 *   SESSION#<sessionKey>   USAGE                the session's spend, atomic ADD counters
 *   WORKSPACE#<name>       WORKSPACE            bootstrap files and skills the system prompt is built from
 *   LANE#<sessionKey>      LANE                 session lane: the active run + the waiting list, one item
 *   LANES#<shard>          L#<sessionKey>       lanes that may be busy (what the sweeper visits; no Scan)
 *   GLANE#<name>           SLOTS                global lane: the runs holding a slot (counting semaphore)
 *   GLANE#<name>           W#<rank>#<at>#<id>   runs waiting for a global slot, priority then acceptance
 *   DISPATCH#<messageId>   FAILURE              why a queue message failed (it reaches the DLQ)
 *   AUTH#<provider>        PROFILE#<profileId>  auth-profile health: cooldowns shared by every run
 *   APIKEY#<sha256>        APIKEY               API key (tenant, name, scopes), by the digest of the key
 *   APIKEY#INDEX           K#<keyId>            API key listing
 *   RATE#<keyId>           M#<minute>           requests of a key in a minute (per-key rate limit)
 *   CONN#<connectionId>    CONN                 WebSocket connection (auth state)
 *   SUBS#<sessionKey>      CONN#<connectionId>  session subscription of a connection
 *   CHIN#<deliveryId>      SEEN                 a channel delivery (update_id, event_id, webhook-id) already accepted
 *   RUN#<runId>            DELIVERY             channel delivery ledger: the messages sent for the run's reply
 *   RUN#<runId>            REPLIED              the requester got the run's final `res` (kept off the run record, whose size a write pays)
 */
const SEQ_WIDTH = 12;

export const pad = (n: number): string => String(n).padStart(SEQ_WIDTH, "0");

export const keys = {
  session: (sessionKey: string) => ({ pk: `SESSION#${sessionKey}`, sk: "SESSION" }),
  sessionIndex: (sessionKey: string) => ({ pk: "SESSIONS", sk: `S#${sessionKey}` }),
  transcriptHead: (sessionId: string) => ({ pk: `TRANSCRIPT#${sessionId}`, sk: "HEAD" }),
  transcriptEntry: (sessionId: string, seq: number) => ({ pk: `TRANSCRIPT#${sessionId}`, sk: `E#${pad(seq)}` }),
  run: (runId: string) => ({ pk: `RUN#${runId}`, sk: "RUN" }),
  runEvent: (runId: string, seq: number) => ({ pk: `RUN#${runId}`, sk: `EV#${pad(seq)}` }),
  attempt: (runId: string, n: number) => ({ pk: `RUN#${runId}`, sk: `ATTEMPT#${pad(n)}` }),
  toolCall: (runId: string, toolCallId: string) => ({ pk: `RUN#${runId}`, sk: `TOOL#${toolCallId}` }),
  pendingToolTurn: (runId: string) => ({ pk: `RUN#${runId}`, sk: "PENDING_TURN" }),
  runUsage: (runId: string) => ({ pk: `RUN#${runId}`, sk: "USAGE" }),
  externalInput: (runId: string, inputId: string) => ({ pk: `RUN#${runId}`, sk: `INPUT#${inputId}` }),
  allowAlways: (sessionKey: string, toolName: string) => ({ pk: `SESSION#${sessionKey}`, sk: `ALLOW#${toolName}` }),
  sessionUsage: (sessionKey: string) => ({ pk: `SESSION#${sessionKey}`, sk: "USAGE" }),
  workspace: (name: string) => ({ pk: `WORKSPACE#${name}`, sk: "WORKSPACE" }),
  /** An API key, by the SHA-256 of its secret (the key itself is never stored). */
  apiKey: (sha256: string) => ({ pk: `APIKEY#${sha256}`, sk: "APIKEY" }),
  /** The listing of every API key (by key id; no Scan). */
  apiKeyIndex: (keyId: string) => ({ pk: "APIKEY#INDEX", sk: `K#${keyId}` }),
  /** Requests of one API key in one minute (the per-key rate limit), expires with the window. */
  rateWindow: (keyId: string, minute: number) => ({ pk: `RATE#${keyId}`, sk: `M#${minute}` }),
  /** A deployed configuration, by its version (content hash); immutable. */
  configSnapshot: (version: string) => ({ pk: `CONFIG#${version}`, sk: "CONFIG" }),
  lane: (sessionKey: string) => ({ pk: `LANE#${sessionKey}`, sk: "LANE" }),
  laneRegistry: (shard: number, sessionKey: string) => ({ pk: `LANES#${shard}`, sk: `L#${sessionKey}` }),
  globalSlots: (lane: string) => ({ pk: `GLANE#${lane}`, sk: "SLOTS" }),
  globalWaiter: (lane: string, rank: number, acceptedAt: number, runId: string) => ({
    pk: `GLANE#${lane}`,
    sk: `W#${rank}#${pad(acceptedAt)}#${runId}`,
  }),
  dispatchFailure: (messageId: string) => ({ pk: `DISPATCH#${messageId}`, sk: "FAILURE" }),
  authProfile: (provider: string, profileId: string) => ({ pk: `AUTH#${provider}`, sk: `PROFILE#${profileId}` }),
  channelDelivery: (deliveryId: string) => ({ pk: `CHIN#${deliveryId}`, sk: "SEEN" }),
  deliveryLedger: (runId: string) => ({ pk: `RUN#${runId}`, sk: "DELIVERY" }),
  finalReplied: (runId: string) => ({ pk: `RUN#${runId}`, sk: "REPLIED" }),
  /** A chat notice whose send failed retryably, waiting for the sweeper to try it again (shared/channels/notice-retry.ts). */
  pendingNotice: (id: string) => ({ pk: "CHNOTICES", sk: `N#${id}` }),
  connection: (connectionId: string) => ({ pk: `CONN#${connectionId}`, sk: "CONN" }),
  subscription: (sessionKey: string, connectionId: string) => ({
    pk: `SUBS#${sessionKey}`,
    sk: `CONN#${connectionId}`,
  }),
};

export const prefixes = {
  authProfile: "PROFILE#",
  sessionIndex: "S#",
  transcriptEntry: "E#",
  runEvent: "EV#",
  laneRegistry: "L#",
  pendingNotice: "N#",
  globalWaiter: "W#",
  subscription: "CONN#",
};

/** Items must stay under DynamoDB's 400 KB limit; we keep a margin for attribute names. */
export const MAX_ITEM_BYTES = 400 * 1024;

export function epochSeconds(ms: number): number {
  return Math.floor(ms / 1000);
}
