/**
 * Error codes shared by REST bodies and WebSocket `res` frames
 * (`{ ok:false, error:{ code, message, details? } }`, OpenClaw's gateway shape).
 */
export const ERROR_CODES = [
  "INVALID_REQUEST",
  "UNAUTHORIZED",
  "FORBIDDEN",
  "NOT_FOUND",
  "PAYLOAD_TOO_LARGE",
  "IDEMPOTENCY_CONFLICT",
  "UNKNOWN_METHOD",
  "SESSION_BUSY",
  "RATE_LIMITED",
  "UNAVAILABLE",
  "TIMEOUT",
  "ABORTED",
  /** An approval or client tool call that was already answered, or expired (`details.reason`). */
  "APPROVAL_CONFLICT",
  "INTERNAL",
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

export const HTTP_STATUS: Record<ErrorCode, number> = {
  INVALID_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  PAYLOAD_TOO_LARGE: 413,
  IDEMPOTENCY_CONFLICT: 409,
  UNKNOWN_METHOD: 404,
  SESSION_BUSY: 429,
  RATE_LIMITED: 429,
  UNAVAILABLE: 503,
  TIMEOUT: 504,
  ABORTED: 409,
  APPROVAL_CONFLICT: 409,
  INTERNAL: 500,
};

export interface ApiErrorBody {
  code: ErrorCode;
  message: string;
  details?: Record<string, unknown>;
}

/** An error a handler maps straight to a 4xx/5xx or an `ok:false` frame. */
export class ApiError extends Error {
  override readonly name = "ApiError";
  constructor(readonly code: ErrorCode, message: string, readonly details?: Record<string, unknown>) {
    super(message);
  }
  toBody(): ApiErrorBody {
    return { code: this.code, message: this.message, ...(this.details ? { details: this.details } : {}) };
  }
}
