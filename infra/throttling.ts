/**
 * Throttling and cost limits of the edge, as documented numbers (docs/security.md).
 * Pure data: importing this file must not load aws-cdk-lib.
 */

/** REST stage: steady requests per second and burst, for all callers together. */
export const REST_THROTTLING = { rateLimit: 50, burstLimit: 100 } as const;

/** WebSocket stage: messages (and connects) per second and burst, for all connections together. */
export const WS_THROTTLING = { rateLimit: 50, burstLimit: 100 } as const;

/** The REST authorizer's result cache: a revoked key keeps working at most this long. */
export const AUTHORIZER_CACHE_SECONDS = 300;

/**
 * Reserved concurrency. The front doors are capped so a flood of intake
 * cannot take the account's whole pool; the attempt function (the one that
 * runs runs) keeps a floor of its own. Sums stay far below the default
 * account limit of 1000.
 */
export const RESERVED_CONCURRENCY = { "rest-api": 50, "ws-api": 50, authorizer: 20, attempt: 100 } as const;
