import type { Frame } from "./gateway-client";

/** The server answered a request with `ok:false` (e.g. a refused token). */
export class GatewayRequestError extends Error {
  override readonly name = "GatewayRequestError";
  constructor(readonly frame: Frame) {
    super(frame.error?.message ?? "request failed");
  }
}

/** Bad command-line arguments for `npm run agent`. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}
