import type { AssistantBlock, Message } from "../../core/messages";

/**
 * Step 1 of the history chain: drop what no provider accepts and what carries
 * nothing. Tool names are trimmed; tool calls without a usable name are
 * removed (their results then become orphans and the pairing step drops
 * them); empty text, empty user messages and content-less assistant turns go.
 * Thinking without text and without a signature is noise and goes too.
 */
export function sanitizeHistory(messages: readonly Message[]): Message[] {
  const out: Message[] = [];
  for (const message of messages) {
    if (message.role === "user") {
      if (message.content.trim() !== "") out.push(message);
    } else if (message.role === "tool_result") {
      out.push(message.toolName === message.toolName.trim() ? message : { ...message, toolName: message.toolName.trim() });
    } else {
      const content = message.content.flatMap(sanitizeBlock);
      if (content.length > 0) out.push({ ...message, content });
    }
  }
  return out;
}

function sanitizeBlock(block: AssistantBlock): AssistantBlock[] {
  if (block.type === "text") return block.text.trim() === "" ? [] : [block];
  if (block.type === "thinking") return block.text.trim() === "" && !block.signature ? [] : [block];
  const name = block.name.trim();
  if (name === "" || block.id.trim() === "") return [];
  return [name === block.name ? block : { ...block, name }];
}
