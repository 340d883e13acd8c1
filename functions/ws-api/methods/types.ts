import type { Context } from "aws-lambda";
import type { ConnectionRecord } from "../../../shared/aws/connections";
import type { AppDeps } from "../../../shared/runtime/app-deps";

export interface MethodInput {
  connectionId: string;
  /** The `req` frame's id (the final `agent` answer reuses it). */
  requestId: string;
  /** The authenticated connection (absent only for `connect`). */
  connection?: ConnectionRecord;
  params: unknown;
  context: Context;
}

/** A method returns its `res` payload (sent with ok:true), or a whole frame when it must set `ok` itself. */
export type Method = (deps: AppDeps, input: MethodInput) => Promise<unknown>;

/** A complete `res` frame a method answers with (e.g. a cached final `agent` answer with ok:false). */
export class FrameReply {
  constructor(readonly frame: Record<string, unknown>) {}
}
