import type { RunEvent } from "../aws/event-log";
import { DEFAULT_AGENT_ID } from "../protocol/limits";
import { openClawApprovalFrame } from "../protocol/approval-frames";
import type { EventSurface } from "../protocol/surface";

/**
 * The frames a subscribed connection receives for one logged run event: the
 * `agent` event itself and, for the chat surface, a `chat` event derived from
 * it (assistant text -> `delta`, lifecycle end -> `final`, lifecycle error ->
 * `error`), narrowed to the connection's surface (shared/protocol/surface.ts).
 * Live fan-out and `events.replay` both use this, so a replayed stream is
 * frame-for-frame what a live subscriber on the same surface saw.
 */
export function framesForEvent(event: RunEvent, surface: EventSurface = "both"): unknown[] {
  // Approvals also go out as OpenClaw's `plugin.approval.requested|resolved`, so its clients can answer them.
  const approval = event.stream === "approval" ? openClawApprovalFrame(event) : undefined;
  if (approval) return [agentEventFrame(event), approval];
  const agent = agentEventFrame(event);
  const chat = surface === "agent" ? undefined : chatPayloadFor(event);
  if (!chat) return [agent];
  const chatFrame = { type: "event", event: "chat", payload: chat, seq: event.seq };
  // The chat view of assistant text replaces its agent view; lifecycle keeps both (UIs read its `agent` phases).
  if (surface === "chat" && event.stream === "assistant") return [chatFrame];
  return [agent, chatFrame];
}

/** `{type:"event", event:"agent", payload:{runId, sessionKey, agentId, seq, stream, ts, data}, seq}`. */
export function agentEventFrame(event: RunEvent) {
  const { v: _v, expiresAt: _e, ...rest } = event;
  return { type: "event", event: "agent", payload: { ...rest, agentId: DEFAULT_AGENT_ID }, seq: event.seq };
}

export interface ChatPayload {
  runId: string;
  sessionKey: string;
  agentId: string;
  seq: number;
  state: "delta" | "final" | "error" | "aborted";
  deltaText?: string;
  /** The streamed text so far was withdrawn (OpenClaw's full-content refresh delta). */
  replace?: boolean;
  message?: { role: "assistant"; content: { type: "text"; text: string }[]; timestamp: number };
  stopReason?: string;
  errorMessage?: string;
}

/**
 * OpenClaw's chat surface: assistant deltas (already coalesced) and one
 * final, error or (an aborted run, OpenClaw's `ChatAbortedEvent`) aborted per run.
 */
export function chatPayloadFor(event: RunEvent): ChatPayload | undefined {
  const base = { runId: event.runId, sessionKey: event.sessionKey, agentId: DEFAULT_AGENT_ID, seq: event.seq };
  const message = (text: string) => ({ role: "assistant" as const, content: [{ type: "text" as const, text }], timestamp: event.ts });
  const data = event.data;
  if (event.stream === "assistant" && typeof data.delta === "string") {
    const replace = data.reset === true ? { replace: true } : {};
    return { ...base, state: "delta", deltaText: data.delta, ...replace, message: message(String(data.text ?? data.delta)) };
  }
  if (event.stream !== "lifecycle") return undefined;
  if (data.phase === "end") {
    const payloads = Array.isArray(data.payloads) ? (data.payloads as { text?: unknown }[]) : [];
    const text = payloads.map((p) => (typeof p.text === "string" ? p.text : "")).filter(Boolean).join("\n\n");
    const stopReason = (data.meta as { stopReason?: unknown } | undefined)?.stopReason;
    return { ...base, state: "final", stopReason: typeof stopReason === "string" ? stopReason : "stop", message: message(text) };
  }
  if (data.phase === "error" && (data.kind === "aborted" || data.status === "aborted")) {
    return { ...base, state: "aborted", stopReason: "aborted", errorMessage: typeof data.error === "string" ? data.error : "The run was aborted." };
  }
  if (data.phase === "error") {
    return { ...base, state: "error", errorMessage: typeof data.error === "string" ? data.error : "The run failed." };
  }
  return undefined;
}
