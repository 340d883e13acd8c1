import type { ThinkingLevel } from "./failures";

/**
 * pickFallbackThinkingLevel (reference §G.66): when a provider rejects the
 * requested reasoning level, pick one it accepts and try again; never a level
 * already tried. `accepted` is what the adapter read from the rejection
 * (providers/failure-details.ts), best first.
 */
export function pickFallbackThinkingLevel(accepted: readonly ThinkingLevel[], attempted: readonly ThinkingLevel[]): ThinkingLevel | undefined {
  return accepted.find((level) => !attempted.includes(level));
}
