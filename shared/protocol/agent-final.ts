import type { RunRecord } from "../aws/runs";
import { capText } from "../core/truncate";
import { frameBytes } from "./chunks";
import type { ApiErrorBody } from "./errors";
import { DEFAULT_AGENT_ID } from "./limits";

/**
 * The second `res` of an `agent` request (OpenClaw's `expectFinal` answer),
 * built from the ended run's record so every sender (run-finalize, an abort,
 * a duplicate request after the end) answers the same bytes:
 *
 *   ok:    {ok:true,  payload:{runId, status:"ok", summary:"completed", result:{payloads:[{text, mediaUrl:null}], meta}}}
 *   other: {ok:false, payload:{runId, status:"error"|"timeout"|"aborted", summary}, error:{code, message}}
 */
export function finalResponseFrame(requestId: string, run: RunRecord, maxBytes?: number) {
  const base = { runId: run.runId, sessionKey: run.sessionKey, agentId: DEFAULT_AGENT_ID };
  if (run.status === "ok") {
    const payloads = (run.result?.payloads ?? []).map((p) => ({ text: p.text, mediaUrl: null }));
    const frame = { type: "res", id: requestId, ok: true as const, payload: { ...base, status: "ok", summary: "completed", result: { payloads, meta: run.result?.meta ?? {} } } };
    return maxBytes === undefined ? frame : fitOkFrame(frame, maxBytes);
  }
  const summary = run.error ?? FALLBACK_SUMMARY[run.status] ?? "The run did not complete.";
  const error: ApiErrorBody = { code: run.status === "timeout" ? "TIMEOUT" : run.status === "aborted" ? "ABORTED" : "UNAVAILABLE", message: summary };
  return { type: "res", id: requestId, ok: false, payload: { ...base, status: run.status, summary: capText(summary, 4000).text }, error: { ...error, message: capText(error.message, 4000).text } };
}

const FALLBACK_SUMMARY: Partial<Record<RunRecord["status"], string>> = {
  error: "The run failed.",
  timeout: "The run timed out.",
  aborted: "The run was aborted.",
};

type OkFrame = { type: string; id: string; ok: true; payload: { result: { payloads: { text: string; mediaUrl: null }[]; meta: Record<string, unknown> } } & Record<string, unknown> };

/**
 * For clients that cannot reassemble chunks (OpenClaw's CLI) the final answer
 * must fit one frame: drop `meta` first, then cap the reply text (the whole
 * reply stays in `GET /v1/runs/{runId}` and in the `lifecycle end` event).
 */
function fitOkFrame(frame: OkFrame, maxBytes: number): OkFrame {
  if (frameBytes(frame) <= maxBytes) return frame;
  const result = { ...frame.payload.result, meta: { truncated: true } };
  let fitted: OkFrame = { ...frame, payload: { ...frame.payload, result } };
  const overhead = frameBytes({ ...fitted, payload: { ...fitted.payload, result: { ...result, payloads: [] } } });
  const perPayload = Math.max(200, Math.floor((maxBytes - overhead - 200) / Math.max(1, result.payloads.length)));
  for (let budget = perPayload; frameBytes(fitted) > maxBytes && budget > 100; budget = Math.floor(budget * 0.7)) {
    const payloads = result.payloads.map((p) => ({ ...p, text: capText(p.text, budget).text }));
    fitted = { ...fitted, payload: { ...fitted.payload, result: { ...result, payloads } } };
  }
  return fitted;
}

