import type { ThinkingLevel } from "../core/run-loop";

/**
 * How a requested thinking level becomes each provider's parameter. `off`
 * (or no level) sends nothing, so the provider's default applies and
 * OpenAI-compatible servers that know no reasoning parameter are not upset.
 */
export type OpenAIEffort = "minimal" | "low" | "medium" | "high";

export function openAIReasoningEffort(level: ThinkingLevel | undefined): OpenAIEffort | undefined {
  switch (level) {
    case "minimal":
    case "low":
    case "medium":
    case "high":
      return level;
    case "xhigh":
      return "high";
    default:
      return undefined;
  }
}

/** Anthropic extended thinking: budget_tokens >= 1024 and below max_tokens. */
export const ANTHROPIC_THINKING_BUDGETS: Record<Exclude<ThinkingLevel, "off">, number> = {
  minimal: 1024,
  low: 2048,
  medium: 8192,
  high: 16_384,
  xhigh: 32_768,
};

/** Room for the visible answer above the thinking budget. */
export const ANTHROPIC_ANSWER_ROOM = 1024;

export function anthropicThinking(level: ThinkingLevel | undefined, maxTokens: number): { budgetTokens: number; maxTokens: number } | undefined {
  if (!level || level === "off") return undefined;
  const budgetTokens = ANTHROPIC_THINKING_BUDGETS[level];
  return { budgetTokens, maxTokens: Math.max(maxTokens, budgetTokens + ANTHROPIC_ANSWER_ROOM) };
}
