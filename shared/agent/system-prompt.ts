import type { Continuation } from "../core/run-loop";

/** Our own wording for the continuation instructions a retried attempt carries. */
export const CONTINUATION_INSTRUCTIONS: Record<Continuation, string> = {
  empty_response:
    "Your previous reply was empty. Answer the user's last message now with a visible reply.",
  reasoning_only:
    "Your previous turn contained only reasoning and no visible answer. Continue from where you stopped and give the user a visible final answer.",
};

export interface SystemPromptParts {
  base: string;
  continuation?: Continuation;
  extra?: string;
}

/** The system prompt is rebuilt for every attempt (never carried over from an earlier one). */
export function buildSystemPrompt(parts: SystemPromptParts): string {
  return [parts.base, parts.extra, parts.continuation ? CONTINUATION_INSTRUCTIONS[parts.continuation] : undefined]
    .filter((part): part is string => typeof part === "string" && part.trim() !== "")
    .join("\n\n");
}
