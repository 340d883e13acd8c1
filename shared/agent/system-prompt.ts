import type { Continuation } from "../core/run-loop";
import { buildPromptSections, type PromptSectionsInput } from "./prompt/sections";

/** Our own wording for the continuation instructions a retried attempt carries. */
export const CONTINUATION_INSTRUCTIONS: Record<Continuation, string> = {
  empty_response:
    "Your previous reply was empty. Answer the user's last message now with a visible reply.",
  reasoning_only:
    "Your previous turn contained only reasoning and no visible answer. Continue from where you stopped and give the user a visible final answer.",
  // Set by the outer loop after it compacted the transcript (shared/core/decide-steps.ts).
  compaction:
    "Earlier parts of this conversation were compacted into the summary above. Continue from the current state and give the final answer; do not start over, do not repeat work the summary or the transcript shows as done, and only call tools again if the needed evidence is missing.",
};

export interface SystemPromptParts extends PromptSectionsInput {
  continuation?: Continuation;
}

/**
 * The system prompt is rebuilt for every attempt (never carried over from an
 * earlier one): OpenClaw's sections (./prompt/sections.ts), then a
 * continuation instruction when the outer loop asks for one (it is the
 * runner's own control, so it stays even in `none` mode).
 */
export function buildSystemPrompt(parts: SystemPromptParts): string {
  const continuation = parts.continuation ? CONTINUATION_INSTRUCTIONS[parts.continuation] : undefined;
  return [buildPromptSections(parts), continuation].filter((part): part is string => typeof part === "string" && part.trim() !== "").join("\n\n");
}

export interface PromptMutations {
  /** The context engine's addition, prepended (reference D.41). */
  engineAddition?: string;
  /** before_prompt_build, merged over all handlers. */
  hook?: { systemPrompt?: string; prependSystemContext?: string; appendSystemContext?: string };
}

/**
 * What happens to the built prompt inside an attempt, in OpenClaw's order:
 * the context engine's addition is prepended; then a hook's `systemPrompt`
 * replaces the whole prompt, and its prepend/append contexts wrap the result.
 */
export function applyPromptMutations(built: string, mutations: PromptMutations): string {
  const withEngine = mutations.engineAddition ? `${mutations.engineAddition}\n\n${built}` : built;
  const hook = mutations.hook ?? {};
  const replaced = hook.systemPrompt ?? withEngine;
  return [hook.prependSystemContext, replaced, hook.appendSystemContext]
    .filter((part): part is string => typeof part === "string" && part.trim() !== "")
    .join("\n\n");
}
