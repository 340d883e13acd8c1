import { describe, expect, it } from "vitest";
import type { RunEvent } from "../../shared/aws/event-log";
import { framesForEvent } from "../../shared/events/frames";
import { CAP_SURFACE_AGENT, CAP_SURFACE_CHAT, surfaceOfConnect } from "../../shared/protocol/surface";

const event = (seq: number, stream: RunEvent["stream"], data: Record<string, unknown>): RunEvent => ({ v: 1, runId: "r", sessionKey: "s", seq, stream, ts: 1, data });
const names = (frames: unknown[]) => frames.map((f) => (f as { event: string }).event);

describe("one surface per connection", () => {
  it("a declared cap wins; OpenClaw's UI modes get the chat view; saying nothing gets both", () => {
    expect(surfaceOfConnect([CAP_SURFACE_AGENT], "ui")).toBe("agent");
    expect(surfaceOfConnect([CAP_SURFACE_CHAT], "cli")).toBe("chat");
    expect(surfaceOfConnect([CAP_SURFACE_AGENT, CAP_SURFACE_CHAT], "ui")).toBe("both");
    // OpenClaw's TUI: caps agent-kind, plugin-approvals, task-suggestions, tool-events; mode ui.
    expect(surfaceOfConnect(["agent-kind", "plugin-approvals", "task-suggestions", "tool-events"], "ui")).toBe("chat");
    expect(surfaceOfConnect(undefined, "webchat")).toBe("chat");
    // OpenClaw's CLI (caps [], mode cli) and a client that sends nothing: both, as OpenClaw's gateway sends.
    expect(surfaceOfConnect([], "cli")).toBe("both");
    expect(surfaceOfConnect(undefined, undefined)).toBe("both");
  });

  it("assistant text is one frame on the agent and chat surfaces, two on both", () => {
    const text = event(3, "assistant", { text: "Hi", delta: "Hi" });
    expect(names(framesForEvent(text, "both"))).toEqual(["agent", "chat"]);
    expect(names(framesForEvent(text, "agent"))).toEqual(["agent"]);
    expect(names(framesForEvent(text, "chat"))).toEqual(["chat"]);
  });

  it("lifecycle keeps its agent frame on the chat surface (UIs read its phases); the agent surface gets no chat frame", () => {
    const end = event(4, "lifecycle", { phase: "end", payloads: [{ text: "Hi" }], meta: {} });
    expect(names(framesForEvent(end, "chat"))).toEqual(["agent", "chat"]);
    expect(names(framesForEvent(end, "agent"))).toEqual(["agent"]);
    const tool = event(5, "tool", { phase: "start", name: "read", toolCallId: "c", args: {} });
    for (const surface of ["agent", "chat", "both"] as const) expect(names(framesForEvent(tool, surface))).toEqual(["agent"]);
  });
});
