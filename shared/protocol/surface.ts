/**
 * Which of the two views of a run's text a connection receives: OpenClaw's
 * gateway sends every streamed text update twice, as an `agent` event
 * (`stream:"assistant"`) and as a `chat` `delta`. Each of its clients reads
 * one of them: the CLI (`openclaw agent`) reads no events at all, the TUI /
 * Control UI / WebChat render `chat` deltas and use `agent` events only for
 * lifecycle and tool activity (OpenClaw src/tui/tui-event-handlers.ts), our
 * own clients read `agent` events. Sending one view where the client said
 * (or its OpenClaw mode shows) which it reads halves the posts of a stream.
 *
 *   - "agent": `agent` frames only (no `chat` frames at all).
 *   - "chat":  `chat` frames for assistant text instead of `agent` ones;
 *              every other event still as `agent` (lifecycle, tool, thinking).
 *   - "both":  both, as OpenClaw's gateway does (the default).
 */
export const EVENT_SURFACES = ["agent", "chat", "both"] as const;
export type EventSurface = (typeof EVENT_SURFACES)[number];

/** `connect.params.caps`: the client reads `agent` events (text included) and no `chat` events. */
export const CAP_SURFACE_AGENT = "surface-agent";
/** `connect.params.caps`: the client renders `chat` deltas; assistant text is not sent again as `agent` events. */
export const CAP_SURFACE_CHAT = "surface-chat";

/** OpenClaw's UI client modes (TUI, Control UI, WebChat): they render `chat` deltas. */
const CHAT_CLIENT_MODES = new Set(["ui", "webchat"]);

/**
 * A declared cap wins (both declared: both); else OpenClaw's UI modes get
 * the chat view; anything that says nothing gets both, which every OpenClaw
 * client and script reads as it would from OpenClaw's own gateway.
 */
export function surfaceOfConnect(caps: readonly string[] | undefined, clientMode: string | undefined): EventSurface {
  const agent = caps?.includes(CAP_SURFACE_AGENT) ?? false;
  const chat = caps?.includes(CAP_SURFACE_CHAT) ?? false;
  if (agent !== chat) return agent ? "agent" : "chat";
  if (agent && chat) return "both";
  return clientMode !== undefined && CHAT_CLIENT_MODES.has(clientMode) ? "chat" : "both";
}
