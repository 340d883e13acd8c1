/**
 * Single-table key layout (pk / sk, both strings). One place so the access
 * patterns are visible at a glance:
 *
 *   SESSION#<sessionKey>   SESSION              session metadata (key -> current sessionId)
 *   TRANSCRIPT#<sessionId> HEAD                 writer claim (run, epoch, lease) + nextSeq
 *   TRANSCRIPT#<sessionId> E#<seq>              transcript entries, append-only
 *   RUN#<runId>            RUN                  run record (status, timestamps, result)
 *   RUN#<runId>            EV#<seq>             event log (replay after a sequence number)
 *   RUN#<runId>            ATTEMPT#<n>          attempt diagnostics
 *   LANE#<sessionKey>      LANE                 session lane: the active run
 *   LANE#<sessionKey>      Q#<acceptedAt>#<id>  runs waiting for the lane, in acceptance order
 *   CONN#<connectionId>    CONN                 WebSocket connection (auth state)
 *   SUBS#<sessionKey>      CONN#<connectionId>  session subscription of a connection
 */
const SEQ_WIDTH = 12;

export const pad = (n: number): string => String(n).padStart(SEQ_WIDTH, "0");

export const keys = {
  session: (sessionKey: string) => ({ pk: `SESSION#${sessionKey}`, sk: "SESSION" }),
  transcriptHead: (sessionId: string) => ({ pk: `TRANSCRIPT#${sessionId}`, sk: "HEAD" }),
  transcriptEntry: (sessionId: string, seq: number) => ({ pk: `TRANSCRIPT#${sessionId}`, sk: `E#${pad(seq)}` }),
  run: (runId: string) => ({ pk: `RUN#${runId}`, sk: "RUN" }),
  runEvent: (runId: string, seq: number) => ({ pk: `RUN#${runId}`, sk: `EV#${pad(seq)}` }),
  attempt: (runId: string, n: number) => ({ pk: `RUN#${runId}`, sk: `ATTEMPT#${pad(n)}` }),
  lane: (sessionKey: string) => ({ pk: `LANE#${sessionKey}`, sk: "LANE" }),
  laneWaiter: (sessionKey: string, acceptedAt: string, runId: string) => ({
    pk: `LANE#${sessionKey}`,
    sk: `Q#${acceptedAt}#${runId}`,
  }),
  connection: (connectionId: string) => ({ pk: `CONN#${connectionId}`, sk: "CONN" }),
  subscription: (sessionKey: string, connectionId: string) => ({
    pk: `SUBS#${sessionKey}`,
    sk: `CONN#${connectionId}`,
  }),
};

export const prefixes = {
  transcriptEntry: "E#",
  runEvent: "EV#",
  laneWaiter: "Q#",
  subscription: "CONN#",
};

/** Items must stay under DynamoDB's 400 KB limit; we keep a margin for attribute names. */
export const MAX_ITEM_BYTES = 400 * 1024;

export function epochSeconds(ms: number): number {
  return Math.floor(ms / 1000);
}
