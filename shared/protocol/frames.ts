import * as z from "zod";
import type { ApiErrorBody } from "./errors";

/**
 * WebSocket frames in OpenClaw's gateway shape:
 *   request  {type:"req", id, method, params}
 *   response {type:"res", id, ok, payload | error}
 *   event    {type:"event", event, payload, seq}
 */
export const PROTOCOL_VERSION = 1;
export const SERVER_NAME = "serverless-agent-runner";
export const SERVER_VERSION = "0.1.0";

export const RequestFrameSchema = z.lazy(() => z.object({
  type: z.literal("req"),
  id: z.string().min(1).max(256),
  method: z.string().min(1).max(128),
  params: z.unknown().optional(),
}));
export type RequestFrame = z.infer<typeof RequestFrameSchema>;

export function okFrame(id: string, payload: unknown) {
  return { type: "res", id, ok: true, payload };
}

export function errorFrame(id: string | null, error: ApiErrorBody, payload?: unknown) {
  return { type: "res", id, ok: false, error, ...(payload !== undefined ? { payload } : {}) };
}

export function eventFrame(event: string, payload: unknown, seq?: number) {
  return { type: "event", event, payload, ...(seq !== undefined ? { seq } : {}) };
}
