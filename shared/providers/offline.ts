import { createHash } from "node:crypto";
import type { AssistantBlock, AssistantMessage, Message, Usage } from "../core/messages";
import type { ModelProvider, ModelRequest, ProviderEvent } from "./types";

export const OFFLINE_PROVIDER_ID = "offline";

/** Arithmetic in the user's message triggers a calculator tool call, so tools are exercised offline. */
const ARITHMETIC = /(-?\d+(?:\.\d+)?(?:\s*[-+*/]\s*\(?\s*-?\d+(?:\.\d+)?\s*\)?)+)/;
const CHARS_PER_TOKEN = 4;

/**
 * The built-in model used when no provider key is configured: deterministic,
 * offline, streamed in word-sized chunks through the same event contract as
 * the real adapters. It echoes the user, or, when the message contains
 * arithmetic and a `calculator` tool is offered, calls it and reports the result.
 */
export function createOfflineProvider(): ModelProvider {
  return {
    id: OFFLINE_PROVIDER_ID,
    offline: true,
    api: "offline",
    stream: (request) => offlineStream(request),
  };
}

async function* offlineStream(request: ModelRequest): AsyncGenerator<ProviderEvent> {
  const last = request.messages[request.messages.length - 1];
  const toolCall = last?.role === "user" ? plannedToolCall(request, last.content) : undefined;
  const content: AssistantBlock[] = [];
  if (toolCall) {
    yield { type: "tool-call", ...toolCall };
    content.push({ type: "tool_call", ...toolCall });
  } else {
    let text = "";
    for (const chunk of chunksOf(replyText(request.messages))) {
      if (request.signal?.aborted) {
        yield { type: "error", failure: abortedFailure(text.length > 0), partial: message(request, [{ type: "text", text }], "aborted") };
        return;
      }
      text += chunk;
      yield { type: "text-delta", text: chunk };
      await new Promise((resolve) => setImmediate(resolve));
    }
    content.push({ type: "text", text });
  }
  const stopReason = toolCall ? "tool_calls" : "stop";
  const done = message(request, content, stopReason);
  yield { type: "end", message: done, stopReason, usage: done.usage };
}

function plannedToolCall(request: ModelRequest, userText: string) {
  if (!request.tools.some((tool) => tool.name === "calculator")) return undefined;
  const match = ARITHMETIC.exec(userText);
  if (!match) return undefined;
  const expression = match[1].trim();
  const id = `call_${createHash("sha256").update(expression).digest("hex").slice(0, 16)}`;
  return { id, name: "calculator", args: { expression } };
}

function replyText(messages: Message[]): string {
  const last = messages[messages.length - 1];
  if (last?.role === "tool_result") {
    return last.isError ? `The ${last.toolName} tool failed: ${last.content}` : `The result is ${last.content}.`;
  }
  const userText = last?.role === "user" ? last.content : "";
  const quoted = userText.length > 500 ? `${userText.slice(0, 500)}…` : userText;
  return `You said: "${quoted}". (This reply comes from the built-in offline model; configure a provider key for a real one.)`;
}

/** Word-sized chunks, like a real token stream. */
function chunksOf(text: string): string[] {
  return text.match(/\S+\s*/g) ?? [text];
}

function message(request: ModelRequest, content: AssistantBlock[], stopReason: AssistantMessage["stopReason"]): AssistantMessage {
  return { role: "assistant", content, provider: OFFLINE_PROVIDER_ID, model: request.model, stopReason, usage: estimateUsage(request, content) };
}

function estimateUsage(request: ModelRequest, content: AssistantBlock[]): Usage {
  const promptChars = request.system.length + JSON.stringify(request.messages).length;
  const outputChars = JSON.stringify(content).length;
  return { input: Math.ceil(promptChars / CHARS_PER_TOKEN), output: Math.ceil(outputChars / CHARS_PER_TOKEN), cacheRead: 0, cacheWrite: 0 };
}

function abortedFailure(responseStarted: boolean) {
  return { kind: "aborted" as const, message: "aborted", retryable: false, responseStarted };
}
