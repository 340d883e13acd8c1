import type { Context } from "aws-lambda";
import type { ConnectionRecord } from "../../../shared/aws/connections";
import type { AppDeps } from "../../../shared/runtime/app-deps";
import type { Caller } from "../../../shared/core/access";

export interface MethodInput {
  connectionId: string;
  /** The `req` frame's id (the final `agent` answer reuses it). */
  requestId: string;
  /** The authenticated connection (absent only for `connect`). */
  connection?: ConnectionRecord;
  params: unknown;
  context: Context;
  /** Who the connection acts as (absent only for `connect`): reads and writes stay in its tenant. */
  caller?: Caller;
  /**
   * The caller's rate limit, still being counted (`agent` only, see app.ts):
   * rejects with RATE_LIMITED over the limit. A method given it reads what it
   * needs meanwhile and writes nothing before it has settled.
   */
  admitted?: Promise<void>;
}

/** A method returns its `res` payload (sent with ok:true), or a whole frame when it must set `ok` itself. */
export type Method = (deps: AppDeps, input: MethodInput) => Promise<unknown>;

/** A complete `res` frame a method answers with (e.g. a cached final `agent` answer with ok:false). */
export class FrameReply {
  constructor(readonly frame: Record<string, unknown>) {}
}
