import type { AssistantMessage } from "../../core/messages";
import type { StreamTransform } from "./transforms";

/** Some models pad tool names with spaces or newlines; the tool registry (and replay) need them exact. */
export const trimToolCallNames: StreamTransform = {
  name: "trim_tool_call_names",
  async *apply(source) {
    for await (const event of source) {
      if (event.type === "tool-call") yield { ...event, name: event.name.trim() };
      else if (event.type === "end") yield { ...event, message: trimmed(event.message) };
      else if (event.type === "error") yield { ...event, partial: trimmed(event.partial) };
      else yield event;
    }
  },
};

function trimmed(message: AssistantMessage): AssistantMessage {
  return { ...message, content: message.content.map((block) => (block.type === "tool_call" ? { ...block, name: block.name.trim() } : block)) };
}
