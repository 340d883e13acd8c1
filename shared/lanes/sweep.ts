/**
 * The sweep's schedule. The sweep itself lives in shared/sweeper/ (it ends
 * dead runs, so it sits above both `run` and `lanes`); the constants stay
 * here because the local stack and the CDK app read them.
 */

/** The schedule (EventBridge, every minute; the local stack's timer). */
export const SWEEP_INTERVAL_MS = 60_000;

/** After asking a stalled run to abort, how long it gets to stop by itself before the sweeper ends it. */
export const ABORT_DRAIN_MS = 60_000;
