import type { AssistantBlock, AssistantMessage, ToolCallBlock } from "../../core/messages";
import type { StreamContext, StreamTransform } from "./transforms";

/** What OpenAI and Anthropic accept as a tool name (and so what can be replayed later). */
const VALID_NAME = /^[A-Za-z0-9_-]{1,64}$/;
/** Prefixes some models put before the function name ("functions.read", "default_api:read"). */
const NAMESPACE_PREFIX = /^(functions|function|tools|default_api)[.:]/i;

type Verdict = { keep: false } | { keep: true; id: string; name: string };

/**
 * Malformed tool calls are repaired or removed before anything else sees
 * them: a namespaced name that points at an offered tool is unwrapped; a name
 * no provider would accept on replay is dropped; a missing or repeated id is
 * replaced. (Calls to unknown but well-formed names are kept: the tool
 * lifecycle answers them with an error the model can learn from.)
 */
export const sanitizeMalformedToolCalls: StreamTransform = {
  name: "sanitize_malformed_tool_calls",
  async *apply(source, context) {
    const verdicts: Verdict[] = [];
    const seenIds = new Set<string>();
    for await (const event of source) {
      if (event.type === "tool-call") {
        const verdict = judge(event, context, seenIds);
        verdicts.push(verdict);
        if (verdict.keep) yield { ...event, id: verdict.id, name: verdict.name };
      } else if (event.type === "end") {
        const message = applyVerdicts(event.message, verdicts);
        yield { ...event, message, stopReason: message.stopReason };
      } else if (event.type === "error") yield { ...event, partial: applyVerdicts(event.partial, verdicts) };
      else yield event;
    }
  },
};

function judge(call: { id: string; name: string }, context: StreamContext, seenIds: Set<string>): Verdict {
  const trimmed = call.name.trim();
  const unwrapped = trimmed.replace(NAMESPACE_PREFIX, "");
  const candidate = unwrapped !== trimmed && context.toolNames.has(unwrapped) ? unwrapped : trimmed;
  if (!VALID_NAME.test(candidate)) return { keep: false };
  // Surrounding whitespace is the trim transform's job (it runs later for native and promoted calls alike).
  const name = candidate === trimmed ? call.name : candidate;
  const id = call.id.trim() === "" || seenIds.has(call.id) ? context.newCallId() : call.id;
  seenIds.add(id);
  return { keep: true, id, name };
}

/** The message's tool_call blocks are in event order: apply the n-th verdict to the n-th block. */
function applyVerdicts(message: AssistantMessage, verdicts: readonly Verdict[]): AssistantMessage {
  let index = 0;
  const content: AssistantBlock[] = [];
  for (const block of message.content) {
    if (block.type !== "tool_call") {
      content.push(block);
      continue;
    }
    const verdict = verdicts[index++];
    if (!verdict) content.push(block);
    else if (verdict.keep) content.push({ ...block, id: verdict.id, name: verdict.name } satisfies ToolCallBlock);
  }
  const hasCalls = content.some((block) => block.type === "tool_call");
  const stopReason = message.stopReason === "tool_calls" && !hasCalls ? "stop" : message.stopReason;
  return { ...message, content, stopReason };
}
