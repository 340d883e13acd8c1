import { THINKING_LEVELS, type ThinkingLevel } from "./run-loop";

/**
 * pickFallbackThinkingLevel (reference §G.66): when a provider rejects the
 * requested reasoning level, pick one it accepts and try again; never a level
 * already tried. Real messages matched:
 * - OpenAI 400: "Unsupported value: 'reasoning_effort' does not support 'minimal' with this model. Supported values are: 'low', 'medium', and 'high'."
 * - OpenAI 400: "Unsupported parameter: 'reasoning_effort' is not supported with this model."
 * - Anthropic 400: "thinking: Extended thinking is not supported for this model" / "`thinking` is not supported on this model"
 * - Anthropic 400: "thinking.budget_tokens: Input should be greater than or equal to 1024" (a reasoning constraint)
 */
const SUPPORTED_LIST = /supported values are:?\s*([^.]+)/i;
const REASONING_CONSTRAINT = /budget_tokens|reasoning[ _]effort.*(?:must|should)|thinking.*(?:must|should) be/i;
const NOT_SUPPORTED = /(?:thinking|reasoning|reasoning_effort)[^.]*not supported|not supported[^.]*(?:thinking|reasoning)/i;

export function pickFallbackThinkingLevel(message: string, attempted: readonly ThinkingLevel[]): ThinkingLevel | undefined {
  const untried = (level: ThinkingLevel) => !attempted.includes(level);
  const listed = SUPPORTED_LIST.exec(message);
  if (listed) {
    const supported = THINKING_LEVELS.filter((level) => new RegExp(`['"\`]?\\b${level}\\b['"\`]?`, "i").test(listed[1]));
    return supported.find(untried);
  }
  if (REASONING_CONSTRAINT.test(message)) return untried("minimal") ? "minimal" : untried("off") ? "off" : undefined;
  if (NOT_SUPPORTED.test(message)) return untried("off") ? "off" : undefined;
  return undefined;
}
